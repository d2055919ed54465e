"""``omnijudge serve``: the Gemini and OpenAI APIs the public evaluators call, answered by omnijudge
judges on this machine (``docs/serve.md``)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option
from evaluators.runtime_options import (add_runtime_arguments, batch_size_arg, non_negative_float_arg,
                                        runtime_from_args)
from evaluators.serve.limits import DEFAULT_MAX_PROMPT_CHARS

log = logging.getLogger(__name__)

API_KEY_ENV = "OMNIJUDGE_API_KEY"


def uvicorn_limits() -> dict:
    """uvicorn settings of the server's edge: the h11 protocol with a header timeout
    (``middleware.HeaderTimeoutH11``, ``limits.HEADER_TIMEOUT_S``), 5 s idle keep-alive, request heads of
    at most 16 KiB, and at most 512 connections and requests at once (then 503)."""
    from evaluators.serve.middleware import HeaderTimeoutH11

    return {"http": HeaderTimeoutH11, "timeout_keep_alive": 5, "h11_max_incomplete_event_size": 16 << 10,
            "limit_concurrency": 512}


def _positive_float(text: str) -> float:
    value = non_negative_float_arg(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


@dataclass(frozen=True)
class ServeCommandOptions:
    """``omnijudge serve``'s options besides the preset and runtime ones (sizes in MB, times in the
    unit their name says)."""

    routes: str | None = option(None, "ROUTES.yaml: model name -> prompt family -> judge folder or preset (default: "
                                      "every known family on its zero-shot presets, for any model name)")
    host: str = option("127.0.0.1", "address to bind (default loopback; any other needs --api-key)")
    port: int = option(8080, "TCP port to listen on (default 8080)", type=int)
    api_key: str | None = option(None, "key every client must send (x-goog-api-key, ?key= or Authorization: "
                                       f"Bearer); default: ${API_KEY_ENV} if set")
    folder: str = option("omnijudge-serve", "server folder: uploaded files and decoding temporaries (default "
                                            "./omnijudge-serve)")
    max_body_mb: float = option(64.0, "largest request body (default 64)", type=_positive_float)
    max_audio_seconds: float = option(600.0, "longest clip judged (default 600)", type=_positive_float)
    max_prompt_chars: int = option(DEFAULT_MAX_PROMPT_CHARS, "longest prompt, its text parts joined (default "
                                   f"{DEFAULT_MAX_PROMPT_CHARS}: the longest public template plus 8,000 characters "
                                   "of placeholder values)", type=batch_size_arg)
    max_inflight_mb: float = option(512.0, "most request-body megabytes held in memory by all requests together; "
                                           "past it a request gets 503 with Retry-After (default 512)",
                                    type=_positive_float)
    max_audios_per_request: int = option(16, "most audio parts in one request (a pairwise or group prompt carries "
                                             "one per system; past it: 400; default 16)", type=batch_size_arg)
    max_request_audio_mb: float = option(64.0, "most audio megabytes a request of several audios names, inline and "
                                               "uploaded files together (past it: 413; default 64)",
                                         type=_positive_float)
    files_quota_mb: float = option(2048.0, "most bytes the uploaded files may hold together (default 2048)",
                                   type=_positive_float)
    files_ttl_hours: float = option(48.0, "hours an uploaded file is kept (default 48, as Gemini)",
                                    type=_positive_float)
    upload_ttl_minutes: float = option(60.0, "minutes an unfinished resumable upload may stay idle before it is "
                                             "dropped and its quota freed (default 60)", type=_positive_float)
    max_wait_ms: float = option(10.0, "longest a request waits for batch-mates (default 10)",
                                type=non_negative_float_arg)
    max_batch: int = option(16, "most clips per model call (default 16)", type=batch_size_arg)
    max_tokens_per_batch: int | None = option(None, "most padded prompt tokens per model call (clips x longest; "
                                                    "default: no budget)", type=batch_size_arg)

    def app_options(self, api_key: str | None):
        """The app's :class:`evaluators.serve.app.ServeOptions` of these options."""
        from evaluators.serve.app import ServeOptions
        from evaluators.serve.batcher import BatchOptions
        from evaluators.serve.files_store import StoreOptions

        mb = 1 << 20
        return ServeOptions(
            folder=Path(self.folder), api_key=api_key, max_body_bytes=int(self.max_body_mb * mb),
            max_audio_seconds=self.max_audio_seconds, max_prompt_chars=self.max_prompt_chars,
            max_inflight_bytes=int(self.max_inflight_mb * mb), max_audios=self.max_audios_per_request,
            max_request_audio_bytes=int(self.max_request_audio_mb * mb),
            store=StoreOptions(quota_bytes=int(self.files_quota_mb * mb), ttl_s=self.files_ttl_hours * 3600,
                               upload_ttl_s=self.upload_ttl_minutes * 60,
                               max_file_bytes=int(min(self.files_quota_mb, 256) * mb)),
            batch=BatchOptions(max_wait_ms=self.max_wait_ms, max_batch=self.max_batch,
                               max_tokens=self.max_tokens_per_batch))


def add_serve_command(sub) -> None:
    """Register ``serve`` on the top-level sub-parsers."""
    from evaluators.benchmark_command import add_preset_arguments

    p = sub.add_parser("serve", help="answer the Gemini / OpenAI judge calls of the public evaluators with "
                                     "omnijudge judges (a local server)")
    add_options(p, ServeCommandOptions, only=("routes",))
    add_preset_arguments(p)
    add_options(p, ServeCommandOptions, skip=("routes",))
    add_runtime_arguments(p)
    p.set_defaults(func=run_serve)


def is_loopback(host: str) -> bool:
    """True for loopback addresses and names that resolve only to them (``localhost``)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def build_app(args):
    """The app of parsed ``serve`` arguments (judges loaded)."""
    from evaluators.serve.routes import JudgeLoader, Routes, check_route_bases, load_route_judges

    o = from_args(ServeCommandOptions, args)
    api_key = o.api_key if o.api_key is not None else os.environ.get(API_KEY_ENV) or None
    if not is_loopback(o.host) and not api_key:
        raise ValueError(f"--host {o.host}: binding a non-loopback address needs --api-key (or ${API_KEY_ENV})")
    if o.routes and (args.base or args.backbone):
        raise ValueError("--base/--backbone apply without --routes only; give base/backbone in the routes file")
    routes = Routes.from_yaml(o.routes) if o.routes else Routes.default(args.base, args.backbone)
    check_route_bases(routes)  # offline: one line within seconds, before torch loads
    from evaluators.serve.app import create_app
    from evaluators.serve.folder_lock import FolderLock

    folder_lock = FolderLock.acquire(o.folder)  # before judges load or the folder is touched: one line if busy
    judges = load_route_judges(routes, JudgeLoader(runtime_from_args(args)))
    return create_app(judges, o.app_options(api_key), folder_lock, routes.settings())


def run_serve(args) -> int:
    import uvicorn

    app = build_app(args)
    for model, families in app.state.judge_families.items():
        print(f"model {model}: {', '.join(families)}", flush=True)
    # uvicorn stops accepting on SIGINT/SIGTERM and finishes the requests in flight before the
    # app's shutdown drains the batcher
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", timeout_graceful_shutdown=60,
                **uvicorn_limits())
    return 0
