"""The OpenAPI document is the contract: FastAPI's document, plus the live-stream frame schemas and the
streamed bodies' `CaseRecordView` and `SubjectAccess` (which no route returns as a model, so FastAPI would
not list them), and the links between operations (`api/links.py`). `make client` writes it to
web/src/api/openapi.json."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema

from bureau.api.frames import frame_schemas, payload_models
from bureau.api.links import add_links
from bureau.api.responses import CaseRecordView, SubjectAccess
from bureau.game.scenario_schema import load_builtin_scenarios
from bureau.scope.vocabulary import EventType

REF_TEMPLATE = "#/components/schemas/{model}"


class ContractRoute(APIRoute):
    """A route whose response keeps exactly the keys the game produced: an optional field it left out stays
    out instead of turning into `null` or a default (`response_model_exclude_unset`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["response_model_exclude_unset"] = True
        super().__init__(*args, **kwargs)


def install_openapi(app: FastAPI) -> None:
    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            listed: list[type[BaseModel]] = [*payload_models(), CaseRecordView, SubjectAccess]
            _, payloads = models_json_schema([(model, "serialization") for model in listed], ref_template=REF_TEMPLATE)
            for name, model_schema in payloads.get("$defs", {}).items():
                components.setdefault(name, model_schema)
            components.update(frame_schemas(lambda model: REF_TEMPLATE.format(model=model.__name__)))
            components["EventType"] = TypeAdapter(EventType).json_schema()  # every `event:` a stream can send
            add_links(schema, listed_scenarios=len(load_builtin_scenarios()))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]
