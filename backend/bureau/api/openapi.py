"""The OpenAPI document is the contract: FastAPI's document, plus the live-stream frame schemas (which no
route returns as JSON, so FastAPI would not list them). `make client` writes it to web/src/api/openapi.json.

Each stream is declared twice: `OperatorFrame` / `StageFrame`, a frame after parsing (the web client's
types), and `OperatorEvent` / `StageEvent`, the same frames as the wire carries them — the OpenAPI 3.2
`itemSchema` of `text/event-stream`, where every field is a string and `data` is JSON (`contentSchema`)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from bureau.api.frames import FRAMES
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
            for name, adapter in FRAMES.items():
                frame = adapter.json_schema(ref_template=REF_TEMPLATE, mode="serialization")
                for model, model_schema in frame.pop("$defs", {}).items():
                    components.setdefault(model, model_schema)
                components[name] = frame
                components[name.replace("Frame", "Event")] = wire_events(frame, components)
            components["EventType"] = TypeAdapter(EventType).json_schema()  # every `event:` a stream can send
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def wire_events(frame: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The frames of one stream as the wire carries them: `id` digits, `event` the type, `data` its payload
    serialised as JSON; one variant per event type, read from the parsed frame's own variants."""
    variants = []
    for ref in frame["discriminator"]["mapping"].values():
        properties = components[ref.rsplit("/", 1)[-1]]["properties"]
        data = {"type": "string", "contentMediaType": "application/json", "contentSchema": properties["data"]}
        variants.append(
            {
                "type": "object",
                "required": ["id", "event", "data"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[0-9]+$"},
                    "event": properties["event"],
                    "data": data,
                },
            }
        )
    return {"oneOf": variants}
