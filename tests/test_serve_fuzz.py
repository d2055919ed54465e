"""A schema fuzz run of ``omnijudge serve``: schemathesis generates requests from the served
``/openapi.json`` (bodies, paths, query strings and headers, valid and not, for every operation)
and no answer may be a 5xx. Bounded: 30 examples per operation, about 400 requests in all."""

import pytest

from serve_testing import tiny_judges

from evaluators.serve.app import ServeOptions, create_app

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402  (schemathesis brings hypothesis)

ANSWERED: list[int] = []


@pytest.fixture(scope="module")
def served_schema(tmp_path_factory):
    app = create_app(tiny_judges(), ServeOptions(folder=tmp_path_factory.mktemp("fuzz"), max_body_bytes=1 << 20))
    return schemathesis.openapi.from_asgi("/openapi.json", app)


schema = schemathesis.pytest.from_fixture("served_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=30, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_5xx(case):
    response = case.call()
    ANSWERED.append(response.status_code)
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:300]}"


@pytest.mark.slow
def test_the_fuzz_run_sent_hundreds_of_requests():
    """Runs after the fuzz test (same module, same process): the run was not vacuous."""
    assert len(ANSWERED) >= 150, len(ANSWERED)
