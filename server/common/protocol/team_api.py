"""The ``team-api`` data channel: requests, their answers, and the events a host pushes."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, ValidationError, field_validator

from server.common.errors import InvalidArgument
from server.common.protocol.codec import ErrorInfo, utf8_size
from server.common.protocol.ids import ApiCallId
from server.common.wire import InboundModel, WireModel, invalid_argument_from

TEAM_API_LABEL = "team-api"
MAX_TEAM_API_MESSAGE = 256 * 1024


class TeamApiRequest(InboundModel):
    id: ApiCallId
    route: str = Field(max_length=128)
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: object) -> object:
        # The route's own model reads ``args`` and refuses a NUL naming its field.
        return value


class TeamApiResult(WireModel):
    id: ApiCallId | None
    result: Any


class TeamApiError(WireModel):
    id: ApiCallId | None
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
    """The ``id`` of a message that failed to decode, if it has a usable one.

    The id is read from the top level only, so a message nested too deep for a parser
    (the reason it failed, perhaps) still has its refusal answered with its id.
    """
    try:
        text = raw.decode() if isinstance(raw, bytes) else raw
        found = _top_level_member(text, "id")
    except (ValueError, IndexError):
        return None
    if isinstance(found, int) and not isinstance(found, bool) and 0 <= found <= 2**53:
        return found
    if isinstance(found, str) and len(found) <= 64 and _is_unicode_text(found):
        return found
    return None


def _is_unicode_text(text: str) -> bool:
    """Whether ``text`` has no lone surrogate: JSON's ``\\ud800`` escape reads as one, but
    no answer can carry it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


def _top_level_member(text: str, name: str) -> Any:
    """The scalar value of member ``name`` of the JSON object ``text`` (the last one, as a
    parser keeps); containers are skipped by their brackets, never parsed. Raises
    ``ValueError`` (or ``IndexError``) when ``text`` is not an object."""
    at = _skip_whitespace(text, 0)
    if text[at] != "{":
        raise ValueError("not an object")
    at, found = _skip_whitespace(text, at + 1), None
    while text[at] != "}":
        key, at = _DECODER.raw_decode(text, at)
        at = _skip_whitespace(text, at)
        if not isinstance(key, str) or text[at] != ":":
            raise ValueError("not an object member")
        at = _skip_whitespace(text, at + 1)
        if text[at] in "[{":
            at, value = _skip_container(text, at), None
        else:
            value, at = _DECODER.raw_decode(text, at)
        if key == name:
            found = value
        at = _skip_whitespace(text, at)
        if text[at] == ",":
            at = _skip_whitespace(text, at + 1)
        elif text[at] != "}":
            raise ValueError("members are separated by commas")
    if text[_skip_whitespace(text, at + 1) :]:
        raise ValueError("text after the object")
    return found


def _skip_whitespace(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at


def _skip_container(text: str, at: int) -> int:
    """The index just past the array or object that opens at ``at``."""
    depth, in_string = 0, False
    while True:
        char = text[at]
        if in_string:
            if char == "\\":
                at += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
