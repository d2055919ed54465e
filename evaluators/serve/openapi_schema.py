"""The OpenAPI schema ``omnijudge serve`` publishes at ``/openapi.json``: FastAPI's own, with the
request bodies of the judge endpoints described by :mod:`evaluators.serve.request_models` (the
handlers read their bodies themselves, bounded, so FastAPI does not see the models). Clients and
schema fuzzers generate requests from it."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from evaluators.serve import request_models

#: the models whose schemas the published document carries
MODELS = (request_models.GenerateContentRequest, request_models.ChatCompletionRequest)
_REF = "#/components/schemas/{model}"


def request_body(model: str) -> dict:
    """``openapi_extra`` of a route whose JSON body is ``model`` (a name in :data:`MODELS`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": _REF.format(model=model)}}}}}


def _schemas() -> dict:
    """Every model of :data:`MODELS` and the models they use, by name."""
    out = {}
    for model in MODELS:
        schema = model.model_json_schema(ref_template=_REF, mode="validation")
        out.update(schema.pop("$defs", {}))
        out[model.__name__] = schema
    return out


def add_request_schemas(app: FastAPI) -> None:
    """Make ``app.openapi()`` (served at ``/openapi.json``) carry the request models."""

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes,
                                 description="The Gemini and OpenAI judge API subsets of omnijudge serve")
            schema.setdefault("components", {}).setdefault("schemas", {}).update(_schemas())
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi
