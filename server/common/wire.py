"""Base models for everything that crosses a wire or is read from configuration.

Fields are snake_case in Python and camelCase on the wire.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from server.common.errors import InvalidArgument


class WireModel(BaseModel):
    """A frozen model for answers and events."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # A field with a default is always present in what is sent: say so in schemas.
        json_schema_serialization_defaults_required=True,
    )


class InboundModel(WireModel):
    """A model for what a client sends: unknown fields are refused, and so is a value of
    the wrong JSON type (``"5"`` for a number), rather than coerced, a number that is
    no number (``NaN``, ``Infinity``: JSON has neither, Python's parser takes both), and
    a text holding a NUL (nobody types one; PostgreSQL cannot store one, SQLite can)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: object) -> object:
        if holds_nul(value):
            raise ValueError("a NUL character (\\u0000) is not allowed")
        return value


def holds_nul(value: object) -> bool:
    """Whether a field's text, or a text in its lists and maps, holds a NUL (a model in it
    checks its own)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, (list, tuple, frozenset, set)):
        return any(holds_nul(item) for item in value)
    if isinstance(value, dict):
        return any(holds_nul(k) or holds_nul(v) for k, v in value.items())
    return False


MAX_WIRE_INT = 2**53 - 1
"""The largest whole number a client may send: what a JavaScript number holds exactly,
and far below the 2^63 at which SQLite and file offsets overflow."""

WireInt = Annotated[int, Field(ge=0, le=MAX_WIRE_INT)]
"""A whole number a client sends (an offset, a size, a count, a choice): never negative,
never past ``MAX_WIRE_INT``. Tighter bounds go on top: ``Annotated[WireInt, Field(le=200)]``."""


def no_control_characters(value: str) -> str:
    """A validator for names and labels: control characters (a newline included) refused."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("control characters are not allowed")
    return value


# What people should never be shown in text an agent wrote: controls (C0 but tab and
# newline, DEL, C1), the line and paragraph separators, and the bidirectional marks,
# embeddings, overrides and isolates that make one text read as another.
_HIDDEN = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_LINE_BREAKS = re.compile(r"[\t\n]")


def text_for_people(value: object) -> object:
    """A validator (before): a text an agent wrote for people, its hidden characters
    removed; tabs and newlines stay. Anything but a string is left to the type check."""
    return shown_text(value) if isinstance(value, str) else value


def line_for_people(value: object) -> object:
    """As ``text_for_people``, for one line: tabs and newlines become spaces."""
    return shown_line(value) if isinstance(value, str) else value


def shown_text(text: str) -> str:
    """``text`` as people may be shown it: its hidden characters removed (a page's title
    or an element's name can hold a bidirectional override that reads one site as
    another); tabs and newlines stay."""
    return _HIDDEN.sub("", text)


def shown_line(text: str) -> str:
    """As ``shown_text``, on one line."""
    return _LINE_BREAKS.sub(" ", _HIDDEN.sub("", text))


def invalid_argument_from(error: ValidationError) -> InvalidArgument:
    """Turn a pydantic failure into one stable error that names the first bad field."""
    first = error.errors(include_url=False)[0]
    location = ".".join(str(part) for part in first["loc"]) or None
    kind = first["type"]
    if kind == "json_invalid":
        message = "the body is not valid JSON"
    elif kind in ("model_type", "model_attributes_type", "dict_type") and location is None:
        message = "the body must be a JSON object"
    elif kind == "extra_forbidden":
        message = f"unknown field '{location}'"
    elif kind == "missing":
        message = f"field '{location}' is required"
    elif location:
        message = f"field '{location}': {first['msg']}"
    else:
        message = str(first["msg"])
    return InvalidArgument(message, field=location)
