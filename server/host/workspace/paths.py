"""Workspace paths: what a name inside a workspace may be, checked before any file call.

A path is relative, its parts separated by ``/``. Refused: an absolute path, ``.`` or
``..`` (also as look-alikes that compatibility normalisation turns into dots or slashes,
such as fullwidth full stops), a backslash, NUL and other control characters, a lone
surrogate, a Windows device name (``CON``, ``nul.txt``, ``COM1``), a part ending in a dot
or a space, a part longer than 255 bytes or a path longer than 1,024 characters, and
names the workspace keeps for itself. Each part is stored in NFC, so the composed and
decomposed forms of one name are one file.
"""

from __future__ import annotations

import re
import unicodedata

from server.common.errors import InvalidArgument

MAX_PATH_CHARS = 1024
MAX_PART_BYTES = 255
# Temporary files of atomic writes start with this; no workspace name may.
RESERVED_PREFIX = ".crewhost-"

_DEVICE = re.compile(r"(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)", re.IGNORECASE)
# Controls, the line and paragraph separators, and the bidirectional overrides that can
# make a name read as another.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# Half of a UTF-16 pair on its own: JSON arguments can carry one, no file name can.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Slashes that no normalisation folds into '/' or '\\' but that read as one.
_SLASH_LIKE = re.compile(r"[\u2044\u2215\u29f5\u29f8\u29f9\u2571\u2572\u27cb\u27cd]")


def _refuse(message: str) -> InvalidArgument:
    return InvalidArgument(message, code="workspacePathInvalid", field="path")


def _check_part(part: str) -> str:
    part = unicodedata.normalize("NFC", part)
    folded = unicodedata.normalize("NFKC", part)
    if part in (".", "..") or folded in (".", ".."):
        raise _refuse("a path may not contain '.' or '..' parts")
    if "/" in folded or "\\" in folded or _SLASH_LIKE.search(folded):
        raise _refuse("a name may not contain a slash or a backslash, or a look-alike of one")
    if part.endswith((".", " ")) or part.startswith(" "):
        raise _refuse("a name may not start with a space or end with a dot or a space")
    if _DEVICE.fullmatch(folded.split(".", 1)[0].rstrip(" ")):
        raise _refuse(f"{part!r} is a device name on some systems")
    if part.lower().startswith(RESERVED_PREFIX) or folded.lower().startswith(RESERVED_PREFIX):
        raise _refuse(f"names starting with {RESERVED_PREFIX!r} are kept for the workspace")
    if len(part.encode()) > MAX_PART_BYTES:
        raise _refuse(f"a name may be at most {MAX_PART_BYTES} bytes long")
    return part


def workspace_parts(path: str, *, allow_root: bool = False) -> tuple[str, ...]:
    """The checked parts of ``path`` (``a/b.txt`` → ``("a", "b.txt")``); ``""`` or ``/``-free
    empty paths name the root only with ``allow_root``. Raises ``workspacePathInvalid``."""
    if len(path) > MAX_PATH_CHARS:
        raise _refuse(f"a path may be at most {MAX_PATH_CHARS} characters long")
    if _UNSAFE.search(path):
        raise _refuse("a path may not contain NUL or other control characters")
    if _LONE_SURROGATE.search(path):
        raise _refuse("a path may not contain a lone surrogate (half of a UTF-16 pair)")
    if "\\" in path:
        raise _refuse("use '/' between folders, not a backslash")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path) or path.startswith("~"):
        raise _refuse("a path is relative: it may not start with '/', '~' or a drive")
    stripped = path.strip("/") if path.endswith("/") else path
    if stripped in ("", "."):
        if allow_root:
            return ()
        raise _refuse("name a file or a folder inside the workspace")
    raw = stripped.split("/")
    if "" in raw:
        raise _refuse("a path may not contain an empty part ('//')")
    return tuple(_check_part(part) for part in raw)


def display_path(parts: tuple[str, ...]) -> str:
    """``parts`` as the agent and the members see the path."""
    return "/".join(parts)
