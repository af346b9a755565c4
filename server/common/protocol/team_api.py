"""The ``team-api`` data channel: requests, their answers, and the events a host pushes."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, ValidationError

from server.common.errors import InvalidArgument
from server.common.protocol.codec import ErrorInfo, utf8_size
from server.common.wire import InboundModel, WireModel, invalid_argument_from

TEAM_API_LABEL = "team-api"
MAX_TEAM_API_MESSAGE = 256 * 1024


RequestId = Annotated[int, Field(ge=0, le=2**53)] | Annotated[str, Field(max_length=64)]


class TeamApiRequest(InboundModel):
    id: RequestId
    route: str = Field(max_length=128)
    args: dict[str, Any] = Field(default_factory=dict)


class TeamApiResult(WireModel):
    id: RequestId | None
    result: Any


class TeamApiError(WireModel):
    id: RequestId | None
    error: ErrorInfo


class TeamApiEvent(WireModel):
    event: str
    data: Any


def decode_team_api_request(raw: str | bytes) -> TeamApiRequest:
    """A request from a peer; a bad one raises with the request's id when it can be read."""
    if utf8_size(raw) > MAX_TEAM_API_MESSAGE:
        raise InvalidArgument(
            f"a message may be at most {MAX_TEAM_API_MESSAGE} bytes", code="messageTooLarge"
        )
    try:
        return TeamApiRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc


def request_id_of(raw: str | bytes) -> int | str | None:
    """The ``id`` of a message that failed to decode, if it has a usable one."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        found = value.get("id")
        if isinstance(found, int) and not isinstance(found, bool) and 0 <= found <= 2**53:
            return found
        if isinstance(found, str) and len(found) <= 64:
            return found
    return None
