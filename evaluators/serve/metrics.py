"""Prometheus metrics of ``omnijudge serve`` (``GET /metrics``, text format 0.0.4), on a registry
of its own so two servers in one process do not share counters."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class ServeMetrics:
    """Requests by API, family and HTTP status; errors by status; latency; batch sizes; queue depth."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self):
        self.registry = CollectorRegistry()
        self.requests = Counter("omnijudge_requests", "judge requests answered", ("api", "family", "code"),
                                registry=self.registry)
        self.errors = Counter("omnijudge_request_errors", "judge requests answered with an error", ("api", "code"),
                              registry=self.registry)
        self.latency = Histogram("omnijudge_request_latency_seconds", "seconds from request to reply", ("api",),
                                 buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
                                 registry=self.registry)
        self.batch_size = Histogram("omnijudge_batch_size", "clips per model call",
                                    buckets=(1, 2, 4, 8, 16, 32, 64, 128), registry=self.registry)
        self.queue_depth = Gauge("omnijudge_queue_depth", "judge requests waiting for the model",
                                 registry=self.registry)

    def observe_batch(self, batch_size: int | None, depth: int) -> None:
        """The batcher's hook: a batch of ``batch_size`` ran (None: a request arrived); ``depth`` waits."""
        if batch_size is not None:
            self.batch_size.observe(batch_size)
        self.queue_depth.set(depth)

    def answered(self, api: str, family: str, code: int, seconds: float) -> None:
        self.requests.labels(api, family or "none", str(code)).inc()
        if code >= 400:
            self.errors.labels(api, str(code)).inc()
        self.latency.labels(api).observe(seconds)

    def text(self) -> bytes:
        return generate_latest(self.registry)
