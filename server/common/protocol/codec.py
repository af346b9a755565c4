"""What every conversation of the protocol shares: its version, its error body, its encoder.

Four conversations make up the protocol, one module each: the host ``link``
(hub <-> host, a websocket), the ``signaling`` bodies (peer -> hub over HTTPS),
the ``team_api`` data channel with its ``events``, and the ``view`` channels.
"""

from __future__ import annotations

from server.common.errors import CrewhostError
from server.common.wire import WireModel

PROTOCOL_VERSION = 1


def utf8_size(raw: str | bytes) -> int:
    """How many bytes a message takes on the wire: size limits count these, not characters."""
    if isinstance(raw, bytes):
        return len(raw)
    # ASCII text is one byte a character, so only other text is encoded to be measured.
    return len(raw) if raw.isascii() else len(raw.encode("utf-8", "surrogatepass"))


class ErrorInfo(WireModel):
    code: str
    message: str


def error_info(error: CrewhostError) -> ErrorInfo:
    """The wire form of an error, the same on the link, the Team API and the view channels."""
    return ErrorInfo(code=error.code, message=error.message)


def encode(message: WireModel) -> str:
    return message.model_dump_json()
