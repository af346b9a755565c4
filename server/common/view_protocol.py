"""The live-view channel ``view:<tabId>``: its label, frame header and messages.

The label carries the options (``view:<tabId>?cursor=1&menu=1&viewport=1280x800``),
since the channel's opening message is the only one sent before the host acts.
Frames are binary: a fixed header, then the JPEG bytes. Everything else is JSON
text with a ``type``.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from urllib.parse import parse_qs

from server.common.errors import InvalidArgument

VIEW_PREFIX = "view:"
FRAME_VERSION = 1
# version, flags (reserved), sequence, CSS width, CSS height, capture time (ms since epoch)
FRAME_HEADER = struct.Struct("!BBIHHd")
MAX_CLIPBOARD = 1024 * 1024
# The largest JSON message a viewer may send, in UTF-8 bytes: a clipboard's text and its envelope.
MAX_VIEW_MESSAGE = MAX_CLIPBOARD + 4096
_TAB_ID = re.compile(r"^[0-9a-f-]{36}$")
_VIEWPORT = re.compile(r"^(\d{2,4})x(\d{2,4})$")


@dataclass(frozen=True)
class ViewOptions:
    tab_id: str
    cursor: bool = False
    menu: bool = False
    viewport: tuple[int, int] | None = None

    def label(self) -> str:
        query = []
        if self.cursor:
            query.append("cursor=1")
        if self.menu:
            query.append("menu=1")
        if self.viewport:
            query.append(f"viewport={self.viewport[0]}x{self.viewport[1]}")
        return VIEW_PREFIX + self.tab_id + ("?" + "&".join(query) if query else "")


def parse_view_label(label: str) -> ViewOptions:
    """The options of a ``view:`` channel; anything malformed is refused."""
    if not label.startswith(VIEW_PREFIX) or len(label) > 200:
        raise InvalidArgument("not a view channel", code="viewLabelInvalid")
    tab_id, _, query = label[len(VIEW_PREFIX) :].partition("?")
    if not _TAB_ID.match(tab_id):
        raise InvalidArgument("malformed tab id in the view label", code="viewLabelInvalid")
    fields = parse_qs(query, strict_parsing=False, max_num_fields=5)
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
