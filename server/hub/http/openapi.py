"""The OpenAPI document, generated from the route table and its pydantic models.

It lists every error code the hub may answer with (``x-error-codes``), so a client
can check that it has words for each.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from server.common.error_codes import HUB_ANSWERS, declared
from server.common.roles import Role
from server.hub.http.routing import Route
from server.hub.schemas import ErrorReply

_REF = "#/components/schemas/{model}"
_PARAM = re.compile(r"{(\w+)}")


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def build_openapi(routes: list[Route], *, version: str) -> dict[str, Any]:
    models: set[type[BaseModel]] = {ErrorReply}
    for route in routes:
        models.update(m for m in (route.body, route.reply) if m is not None)
    ordered = sorted(models, key=lambda m: m.__name__)
    _, schema = models_json_schema(
        [(m, "validation") for m in ordered], ref_template=_REF, by_alias=True
    )
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Crewhost hub API", "version": version},
        "paths": paths,
        "components": {
            "schemas": schema.get("$defs", {}),
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "crewhost_session"},
                "bearer": {"type": "http", "scheme": "bearer"},
            },
        },
        "x-error-codes": declared(HUB_ANSWERS),
    }


def _operation(route: Route) -> dict[str, Any]:
    error = {"$ref": _REF.format(model="ErrorReply")}
    operation: dict[str, Any] = {
        "operationId": _camel(route.name),
        "summary": route.summary,
        "x-least-role": route.access.value if isinstance(route.access, Role) else route.access,
        "parameters": [
            {"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
            for p in _PARAM.findall(route.path)
        ],
        "responses": {
            "default": {
                "description": "An error",
                "content": {"application/json": {"schema": error}},
            }
        },
    }
    if route.access != "public":
        operation["security"] = [{"session": []}, {"bearer": []}]
    if route.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": _REF.format(model=route.body.__name__)}}
            },
        }
    elif route.raw_body_types:
        operation["requestBody"] = {
            "required": True,
            "content": {
                t: {"schema": {"type": "string", "format": "binary"}} for t in route.raw_body_types
            },
        }
    if route.reply is not None:
        content = {
            "application/json": {"schema": {"$ref": _REF.format(model=route.reply.__name__)}}
        }
        operation["responses"][str(route.status)] = {
            "description": route.summary,
            "content": content,
        }
    elif route.reply_content_types:
        content = {
            t: {"schema": {"type": "string", "format": "binary"}} for t in route.reply_content_types
        }
        operation["responses"]["200"] = {"description": route.summary, "content": content}
    else:
        operation["responses"]["204"] = {"description": route.summary}
    return operation
