"""Chat attachments: a file's type from its extension, and its import into a workspace.

The type is never read from the bytes nor taken from whoever sends the file: a
supplied image or text type cannot turn a file into a preview or an image block.
Raster images (PNG, JPEG, WebP, GIF) are images a provider may take as image blocks;
an SVG is a file with an image preview (served only as a ``data:`` URL, which an
``<img>`` shows without running its scripts); every other file has no preview and
reaches the agent as a path in its workspace. Import copies the bytes to a path named
by their SHA-256, so a later change to the original does not change the message.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

AttachmentKind = Literal["image", "file"]
PreviewKind = Literal["image", "none"]

OCTET_STREAM = "application/octet-stream"
FOLDER = "attachments"


@dataclass(frozen=True, slots=True)
class AttachmentType:
    mime: str
    kind: AttachmentKind
    preview: PreviewKind


_IMAGE = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp"}
_IMAGE["gif"] = "image/gif"
_FILES = {
    "mp3": "audio/mpeg",
    "mov": "video/quicktime",
    "mp4": "video/mp4",
    "zip": "application/zip",
    "pdf": "application/pdf",
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
    "json": "application/json",
}


def attachment_type(name: str) -> AttachmentType:
    """The type a file's name gives it."""
    extension = name.rsplit(".", 1)[-1].lower() if "." in name.strip(".") else ""
    if extension in _IMAGE:
        return AttachmentType(_IMAGE[extension], "image", "image")
    if extension == "svg":
        return AttachmentType("image/svg+xml", "file", "image")
    return AttachmentType(_FILES.get(extension, OCTET_STREAM), "file", "none")


@dataclass(frozen=True, slots=True)
class ImportedFile:
    """An attachment's copy in a workspace."""

    name: str
    path: str
    mime: str
    kind: AttachmentKind
    preview: PreviewKind
    size: int
    sha256: str


def imported(name: str, data: bytes) -> ImportedFile:
    """Where ``data`` named ``name`` is kept, its hash and its type."""
    digest = hashlib.sha256(data).hexdigest()
    kind = attachment_type(name)
    return ImportedFile(
        name,
        f"{FOLDER}/{digest[:16]}/{name}",
        kind.mime,
        kind.kind,
        kind.preview,
        len(data),
        digest,
    )
