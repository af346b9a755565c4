"""The JSON messages of a ``view:`` channel (frames are binary; see view_protocol).

What a viewer sends is validated against the inbound models; what the host sends
is built from the outbound ones, so both directions have one definition that the
web client's types are generated from.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel, ValidationError

from server.common.errors import CrewhostError, InvalidArgument
from server.common.protocol import utf8_size
from server.common.view_protocol import MAX_CLIPBOARD, MAX_VIEW_MESSAGE
from server.common.wire import InboundModel, WireModel, invalid_argument_from

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
    item: MenuItem
    text: Annotated[str, Field(max_length=MAX_CLIPBOARD)] = ""


class Resize(InboundModel):
    """Hold the page at this size while the channel is open (the viewer's panel changed)."""

    type: Literal["viewport"]
    width: Annotated[int, Field(ge=200, le=4096)]
    height: Annotated[int, Field(ge=200, le=4096)]


MenuItem = Literal[
    "open-link", "copy-link", "copy", "paste", "select-all", "back", "forward", "reload"
]

ViewMessage = Annotated[
    Take | Release | Pointer | Key | Paste | Copy | MenuChoice | Resize,
    Field(discriminator="type"),
]


class _AnyViewMessage(RootModel[ViewMessage]):
    pass


def check_view_message_size(raw: str | bytes) -> None:
    """Refuse a message larger than ``MAX_VIEW_MESSAGE`` bytes, before it is parsed or queued."""
    if utf8_size(raw) > MAX_VIEW_MESSAGE:
        raise InvalidArgument(
            f"a view message may be at most {MAX_VIEW_MESSAGE} bytes", code="messageTooLarge"
        )


def decode_view_message(raw: str) -> ViewMessage:
    check_view_message_size(raw)
    try:
        return _AnyViewMessage.model_validate_json(raw).root
    except ValidationError as exc:
        raise invalid_argument_from(exc) from exc


# --- what the host sends ---------------------------------------------------------------


class Opened(WireModel):
    """The view is open; frames follow."""

    type: Literal["opened"] = "opened"
    tab_id: str


class Held(WireModel):
    """Whether this viewer now holds the tab (after ``take`` or ``release``)."""

    type: Literal["held"] = "held"
    by_you: bool


class Cursor(WireModel):
    """The CSS cursor under the pointer changed."""

    type: Literal["cursor"] = "cursor"
    cursor: str


class ContextMenu(WireModel):
    """A right-click: what is under the point and the items the client may show."""

    type: Literal["context-menu"] = "context-menu"
    menu_id: int
    x: float
    y: float
    link: str | None
    image: str | None
    selection: bool
    editable: bool
    items: list[MenuItem]


class Copied(WireModel):
    """The text a ``copy``, ``cut`` or ``copy-link`` took, for the viewer's clipboard."""

    type: Literal["copied"] = "copied"
    text: str


class CopyTooLarge(WireModel):
    type: Literal["copyTooLarge"] = "copyTooLarge"
    size: int
    limit: int


class ViewError(WireModel):
    """A message was refused; the channel stays open."""

    type: Literal["error"] = "error"
    code: str
    message: str


class Closed(WireModel):
    """The host ends the view; the channel closes right after."""

    type: Literal["closed"] = "closed"
    code: str
    reason: str


HostViewMessage = Annotated[
    Opened | Held | Cursor | ContextMenu | Copied | CopyTooLarge | ViewError | Closed,
    Field(discriminator="type"),
]


def error_message(error: CrewhostError) -> ViewError:
    return ViewError(code=error.code, message=error.message)
