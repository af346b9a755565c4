"""The live-view channel ``view:<tabId>``: its label, frame header and messages.

The label carries the options (``view:<tabId>?cursor=1&menu=1&viewport=1280x800&take=1``),
since the channel's opening message is the only one sent before the host acts.
Frames are binary: a fixed header, then the JPEG bytes. Everything else is JSON
text with a ``type``.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Annotated, Literal
from urllib.parse import parse_qs

from pydantic import Field, RootModel, ValidationError

from server.common.errors import CrewhostError, InvalidArgument
from server.common.protocol.codec import utf8_size
from server.common.protocol.ids import TAB_ID_PATTERN
from server.common.wire import InboundModel, WireModel, invalid_argument_from

VIEW_PREFIX = "view:"
FRAME_VERSION = 1
# version, flags (reserved), sequence, CSS width, CSS height, capture time (ms since epoch)
FRAME_HEADER = struct.Struct("!BBIHHd")
MAX_CLIPBOARD = 1024 * 1024
# The most characters one ``text`` message may insert (one composition's worth).
MAX_TYPED_TEXT = 4096
# The largest JSON message a viewer may send, in UTF-8 bytes: a clipboard's text and its envelope.
MAX_VIEW_MESSAGE = MAX_CLIPBOARD + 4096
_TAB_ID = re.compile(TAB_ID_PATTERN)
_VIEWPORT = re.compile(r"^(\d{2,4})x(\d{2,4})$")


@dataclass(frozen=True)
class ViewOptions:
    tab_id: str
    cursor: bool = False
    menu: bool = False
    viewport: tuple[int, int] | None = None
    # The view opens holding control of the tab (refused when another person holds it).
    take: bool = False

    def label(self) -> str:
        query = []
        if self.cursor:
            query.append("cursor=1")
        if self.menu:
            query.append("menu=1")
        if self.viewport:
            query.append(f"viewport={self.viewport[0]}x{self.viewport[1]}")
        if self.take:
            query.append("take=1")
        return VIEW_PREFIX + self.tab_id + ("?" + "&".join(query) if query else "")


def parse_view_label(label: str) -> ViewOptions:
    """The options of a ``view:`` channel; anything malformed is refused."""
    if not label.startswith(VIEW_PREFIX) or len(label) > 200:
        raise InvalidArgument("not a view channel", code="viewLabelInvalid")
    tab_id, _, query = label[len(VIEW_PREFIX) :].partition("?")
    if not _TAB_ID.match(tab_id):
        raise InvalidArgument("malformed tab id in the view label", code="viewLabelInvalid")
    fields = parse_qs(query, strict_parsing=False, max_num_fields=6)
    viewport = None
    if "viewport" in fields:
        match = _VIEWPORT.match(fields["viewport"][0])
        if match is None:
            raise InvalidArgument("viewport must be WIDTHxHEIGHT", code="viewLabelInvalid")
        width, height = int(match[1]), int(match[2])
        if not (200 <= width <= 4096 and 200 <= height <= 4096):
            raise InvalidArgument("viewport out of range", code="viewLabelInvalid")
        viewport = (width, height)
    return ViewOptions(
        tab_id=tab_id,
        cursor=fields.get("cursor", ["0"])[0] == "1",
        menu=fields.get("menu", ["0"])[0] == "1",
        viewport=viewport,
        take=fields.get("take", ["0"])[0] == "1",
    )


@dataclass(frozen=True)
class Frame:
    sequence: int
    width: int
    height: int
    captured_at_ms: float
    jpeg: bytes


def encode_frame(
    sequence: int, width: int, height: int, captured_at_ms: float, jpeg: bytes
) -> bytes:
    header = FRAME_HEADER.pack(
        FRAME_VERSION, 0, sequence & 0xFFFFFFFF, width, height, captured_at_ms
    )
    return header + jpeg


def decode_frame(data: bytes) -> Frame:
    if len(data) < FRAME_HEADER.size:
        raise InvalidArgument("frame too short", code="frameInvalid")
    version, _flags, sequence, width, height, captured = FRAME_HEADER.unpack_from(data)
    if version != FRAME_VERSION:
        raise InvalidArgument(f"unknown frame version {version}", code="frameInvalid")
    return Frame(sequence, width, height, captured, data[FRAME_HEADER.size :])


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
    repeat: bool = False


class Text(InboundModel):
    """Text typed without a key of its own (composed, dead keys, emoji, a phone's keyboard),
    inserted at the caret whole."""

    type: Literal["text"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_TYPED_TEXT)]


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
    Take | Release | Pointer | Key | Text | Paste | Copy | MenuChoice | Resize,
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
