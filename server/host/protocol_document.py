"""The host protocol as one document, generated from the models the host validates with.

The Team API's routes appear as OpenAPI operations (``POST /<route>``: the body is
the route's args, the answer its result) although they travel over the ``team-api``
data channel, not HTTP: that lets the web client generate its types with the same
tool it uses for the hub, so a change here breaks the client's build, not its users.
The events a host pushes (``HostEventMessage``, keyed by ``event``), the ``view:``
channel's messages, the constants of both channels and every error code a route or
a view may answer with (``x-error-codes``) come along.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, RootModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from server.common.error_codes import HOST_ANSWERS, declared
from server.common.protocol.codec import PROTOCOL_VERSION
from server.common.protocol.events import HOST_EVENTS, event_envelope
from server.common.protocol.team_api import (
    MAX_TEAM_API_MESSAGE,
    TEAM_API_LABEL,
    TeamApiError,
    TeamApiEvent,
    TeamApiRequest,
    TeamApiResult,
)
from server.common.protocol.view import (
    FRAME_HEADER,
    FRAME_VERSION,
    MAX_CLIPBOARD,
    VIEW_PREFIX,
    HostViewMessage,
    ViewMessage,
)
from server.host.routes.tables import ROUTE_TABLES
from server.host.rtc.team_api import HostRoute
from server.host.services.profiles import PROFILE_HUES

_REF = "#/components/schemas/{model}"


class ViewMessageSchema(RootModel[ViewMessage]):
    """What a viewer sends on a ``view:`` channel."""


class HostViewMessageSchema(RootModel[HostViewMessage]):
    """What the host sends on a ``view:`` channel besides frames."""


_ENVELOPES = tuple(event_envelope(event) for event in HOST_EVENTS)
# Built from HOST_EVENTS at import, so the union cannot forget an event (mypy sees Any).
HostEventMessage: Any = Annotated[Union[_ENVELOPES], Field(discriminator="event")]  # noqa: UP007


class HostEventMessageSchema(RootModel[HostEventMessage]):
    """An event the host pushes on the ``team-api`` channel."""


_NAMED: dict[type[BaseModel], str] = {
    ViewMessageSchema: "ViewMessage",
    HostViewMessageSchema: "HostViewMessage",
    HostEventMessageSchema: "HostEventMessage",
}


def host_protocol_document() -> dict[str, Any]:
    """The host protocol of every route this host serves."""
    return build_host_protocol([route for table in ROUTE_TABLES for route in table.routes])


def build_host_protocol(routes: list[HostRoute]) -> dict[str, Any]:
    # What the host reads is described as it validates; what it sends as it serialises
    # (a field with a default is then required: it is always there).
    modes: dict[type[BaseModel], JsonSchemaMode] = {
        TeamApiRequest: "validation",
        ViewMessageSchema: "validation",
        TeamApiResult: "serialization",
        TeamApiError: "serialization",
        TeamApiEvent: "serialization",
        HostViewMessageSchema: "serialization",
        HostEventMessageSchema: "serialization",
    }
    for route in routes:
        modes[route.args] = "validation"
        modes[route.result] = "serialization"
    ordered = sorted(modes.items(), key=lambda item: _NAMED.get(item[0], item[0].__name__))
    keys, schema = models_json_schema(ordered, ref_template=_REF, by_alias=True)
    schemas = schema.get("$defs", {})
    for model, name in _NAMED.items():
        # A root model's schema is its union; give it the name the client uses.
        generated = keys[(model, modes[model])]["$ref"].rsplit("/", 1)[-1]
        schemas[name] = schemas.pop(generated)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Crewhost host protocol (team-api and view channels)",
            "version": str(PROTOCOL_VERSION),
        },
        "paths": {f"/{route.name}": {"post": _operation(route)} for route in routes},
        "components": {"schemas": schemas},
        "x-constants": {
            "protocol": PROTOCOL_VERSION,
            "teamApiLabel": TEAM_API_LABEL,
            "maxTeamApiMessage": MAX_TEAM_API_MESSAGE,
            "viewPrefix": VIEW_PREFIX,
            "frameVersion": FRAME_VERSION,
            "frameHeaderBytes": FRAME_HEADER.size,
            "maxClipboard": MAX_CLIPBOARD,
            "profileHues": list(PROFILE_HUES),
        },
        "x-error-codes": declared(HOST_ANSWERS),
    }


def _operation(route: HostRoute) -> dict[str, Any]:
    return {
        "operationId": route.name,
        "summary": route.summary,
        "x-least-role": route.least_role.value,
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": _REF.format(model=route.args.__name__)}}
            },
        },
        "responses": {
            "200": {
                "description": route.summary,
                "content": {
                    "application/json": {
                        "schema": {"$ref": _REF.format(model=route.result.__name__)}
                    }
                },
            }
        },
    }
