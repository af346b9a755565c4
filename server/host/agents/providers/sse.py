"""An incremental server-sent-events parser: bytes in, events out.

It follows the WHATWG event-stream rules (UTF-8, lines ended by CRLF, LF or CR,
``data:`` lines joined with LF, ``:`` comments ignored, an optional space after
the colon) and takes its input in chunks cut anywhere: inside a multi-byte
character, between a CR and its LF, or inside a field name. Two departures, both
for model providers: a last event without its closing blank line is still
dispatched by :meth:`SSEParser.finish`, and a line or event longer than the
parser's bounds is refused with :class:`SSEError` instead of growing memory.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

# The longest line and the largest event (its joined data), in characters. A model
# provider's chunks are a few hundred characters; these bounds only stop a broken or
# hostile server from filling memory.
MAX_LINE_CHARS = 1 << 20
MAX_EVENT_CHARS = 4 << 20

_LINE_END = re.compile(r"\r\n|\r|\n")


class SSEError(ValueError):
    """The byte stream is not an event stream this parser will accept."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: its type (``message`` when unnamed), data, and last event id."""

    event: str
    data: str
    id: str | None = None


class SSEParser:
    """Turns the chunks of one event stream into events, in order.

    Call :meth:`feed` with each chunk as it arrives and :meth:`finish` once at the
    end of the stream.
    """

    def __init__(
        self, *, max_line_chars: int = MAX_LINE_CHARS, max_event_chars: int = MAX_EVENT_CHARS
    ) -> None:
        self._max_line = max_line_chars
        self._max_event = max_event_chars
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []
        self._partial_len = 0
        self._skip_lf = False  # the last chunk ended with CR: a leading LF belongs to it
        self._at_start = True  # a byte-order mark is dropped once, at the very start
        self._event_type = ""
        self._data: list[str] = []
        self._data_len = 0
        self._last_id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events that ``chunk`` completes (often none, sometimes several)."""
        return self._take(self._decoder.decode(chunk))

    def finish(self) -> list[SSEEvent]:
        """The end of the stream: a last line and event without their terminators count."""
        events = self._take(self._decoder.decode(b"", final=True))
        if self._partial:
            line = "".join(self._partial)
            self._partial.clear()
            self._partial_len = 0
            self._line(line, events)
        self._dispatch(events)
        return events

    def _take(self, text: str) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if not text:
            return events
        if self._at_start:
            self._at_start = False
            text = text.removeprefix("\ufeff")
        if self._skip_lf:
            self._skip_lf = False
            text = text.removeprefix("\n")
        start = 0
        for end in _LINE_END.finditer(text):
            line = text[start : end.start()]
            if self._partial:
                self._partial.append(line)
                line = "".join(self._partial)
                self._partial.clear()
                self._partial_len = 0
            if len(line) > self._max_line:
                raise SSEError(f"an event-stream line is longer than {self._max_line} characters")
            self._line(line, events)
            start = end.end()
        if text.endswith("\r"):
            self._skip_lf = True
        rest = text[start:]
        if rest:
            self._partial.append(rest)
            self._partial_len += len(rest)
            if self._partial_len > self._max_line:
                raise SSEError(f"an event-stream line is longer than {self._max_line} characters")
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return  # a comment: keep-alives such as ": OPENROUTER PROCESSING"
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_len += len(value) + 1
            if self._data_len > self._max_event:
                raise SSEError(f"an event is larger than {self._max_event} characters")
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        # "retry" sets a reconnection delay, and unknown fields are ignored: neither
        # matters to a stream that is read once.

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(
                SSEEvent(self._event_type or "message", "\n".join(self._data), self._last_id)
            )
        self._event_type = ""
        self._data.clear()
        self._data_len = 0
