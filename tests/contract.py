"""Check real HTTP responses against the app's own OpenAPI document (JSON Schema 2020-12 via `jsonschema`).

`OpenApiContract.check(response)` finds the operation by method and path template, insists that the status
is declared with the response's media type, and validates a JSON body against the declared schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

BASE = "urn:bureau-openapi"


def _pointer(*parts: str) -> str:
    return "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts)


class OpenApiContract:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        self.registry: Registry = Registry().with_resource(BASE, resource)
        self.templates = [
            (template, re.compile("^" + re.sub(r"\{[^/]+\}", "[^/]+", template) + "$"))
            for template in document["paths"]
        ]
        self.seen: set[tuple[str, str, int]] = set()

    def template_of(self, path: str) -> str | None:
        exact = [t for t, pattern in self.templates if pattern.match(path) and "{" not in t]
        matches = exact or [t for t, pattern in self.templates if pattern.match(path)]
        return matches[0] if matches else None

    def validate(self, instance: Any, *pointer: str) -> None:
        """Validate `instance` against the schema at `pointer` inside the document; raises on a mismatch."""
        schema = {"$ref": f"{BASE}#/{_pointer(*pointer)}"}
        Draft202012Validator(schema, registry=self.registry).validate(instance)

    def validate_component(self, instance: Any, name: str) -> None:
        self.validate(instance, "components", "schemas", name)

    def validate_frame(self, frame_schema: str, event_id: int | None, event: str, data: Any) -> None:
        """One live-stream frame: its wire form against the stream's `itemSchema` (`data` is JSON text), and
        the parsed `data` against the `contentSchema` of its event type's variant."""
        wire = {"id": str(event_id), "event": event, "data": json.dumps(data)}
        self.validate_component(wire, frame_schema)
        union = self.document["components"]["schemas"][frame_schema]
        variant = union["discriminator"]["mapping"][event].rsplit("/", 1)[-1]
        payload = self.document["components"]["schemas"][variant]["properties"]["data"]["contentSchema"]["$ref"]
        self.validate_component(data, payload.rsplit("/", 1)[-1])

    def check(self, response: httpx.Response) -> tuple[str, str, int] | None:
        """Validate one response; returns (method, template, status), or None for a path outside the API."""
        method, path = response.request.method.lower(), response.request.url.path
        head = method == "head"
        if head:  # answered as GET without a body (api/transport.py)
            method = "get"
        template = self.template_of(path)
        if template is None:
            assert not path.startswith("/api/") or response.status_code == 404, f"{method} {path}: not in OpenAPI"
            return None
        operation = self.document["paths"][template].get(method)
        if operation is None:  # e.g. 405 for a method the route does not have
            assert response.status_code in (404, 405), f"{method} {template}: undeclared method"
            return None
        status = str(response.status_code)
        declared = operation["responses"]
        assert status in declared, f"{method.upper()} {template} answered {status}, which OpenAPI does not declare"
        content = declared[status].get("content", {})
        media = response.headers.get("content-type", "").split(";")[0].strip()
        if head:
            assert media in content or not content, f"HEAD {template} {status}: {media} not declared"
        elif response.status_code == 204 or not response.content:
            assert not content or media == "", f"{method.upper()} {template} {status}: body expected"
        else:
            assert media in content, f"{method.upper()} {template} {status}: {media} not declared ({list(content)})"
            if media == "application/json":
                where = ("paths", template, method, "responses", status, "content", media, "schema")
                self.validate(response.json(), *where)
        key = (method, template, response.status_code)
        if not head:
            self.seen.add(key)
        return key
