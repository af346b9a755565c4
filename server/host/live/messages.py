"""The JSON messages of a ``view:`` channel (frames are binary; see view_protocol)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel, ValidationError

from server.common.errors import CrewhostError, InvalidArgument
from server.common.view_protocol import MAX_CLIPBOARD
from server.common.wire import InboundModel, invalid_argument_from

Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
Modifiers = Annotated[int, Field(ge=0, le=15)]


class Take(InboundModel):
    type: Literal["take"]


class Release(InboundModel):
    type: Literal["release"]


class Pointer(InboundModel):
    type: Literal["pointer"]
    action: Literal["move", "down", "up", "wheel"]
    x: Fraction
    y: Fraction
    button: Literal["none", "left", "middle", "right"] = "none"
    click_count: Annotated[int, Field(ge=0, le=3)] = 1
    modifiers: Modifiers = 0
    delta_x: Annotated[float, Field(ge=-10000, le=10000)] = 0.0
    delta_y: Annotated[float, Field(ge=-10000, le=10000)] = 0.0


class Key(InboundModel):
    type: Literal["key"]
    action: Literal["down", "up", "char"]
    key: Annotated[str, Field(max_length=32)]
    code: Annotated[str, Field(max_length=32)] = ""
    text: Annotated[str, Field(max_length=8)] = ""
    modifiers: Modifiers = 0


class Paste(InboundModel):
    type: Literal["paste"]
    text: Annotated[str, Field(max_length=MAX_CLIPBOARD)]


class Copy(InboundModel):
    type: Literal["copy", "cut", "select-all"]


class MenuChoice(InboundModel):
    type: Literal["menu-choice"]
    menu_id: int
    item: Literal[
        "open-link", "copy-link", "copy", "paste", "select-all", "back", "forward", "reload"
    ]
    text: Annotated[str, Field(max_length=MAX_CLIPBOARD)] = ""


ViewMessage = Annotated[
    Take | Release | Pointer | Key | Paste | Copy | MenuChoice, Field(discriminator="type")
]


class _AnyViewMessage(RootModel[ViewMessage]):
    pass


def decode_view_message(raw: str) -> ViewMessage:
    if len(raw) > MAX_CLIPBOARD + 4096:
        raise InvalidArgument("message too large", code="messageTooLarge")
    try:
        return _AnyViewMessage.model_validate_json(raw).root
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc


def error_message(error: CrewhostError) -> dict[str, str]:
    return {"type": "error", "code": error.code, "message": error.message}
