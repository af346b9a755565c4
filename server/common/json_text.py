"""JSON text from outside (a provider, a page), read so that every string in it can be sent
and stored.

JSON may escape half of a UTF-16 pair on its own (``"\\ud83d"``): Python reads it as a
lone surrogate, which no UTF-8 text can hold, and a reply, a tool call's arguments or a
turn's end that carried one could be neither sent to members nor stored. Each is read
as U+FFFD instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def read_json(text: str) -> Any:
    """``json.loads(text)`` with each lone surrogate in its strings as U+FFFD; raises what
    ``json.loads`` raises."""
    value = json.loads(text)
    return _mended(value) if _ESCAPED_SURROGATE.search(text) else value


def _mended(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [_mended(item) for item in value]
    if isinstance(value, dict):
        return {_mended(key): _mended(item) for key, item in value.items()}
    return value
