"""A ``.zip`` taken in from a person: read one checked whole before anything is written, and
written the same bytes each time. Skills (``skill_archive``) and agent templates
(``agents/templates``) read and write theirs here, each with its own limits and error code.

Reading refuses, with the caller's error class and a reason word leading the message: an
archive too large (``tooLarge``), not a zip (``notZip``), too many entries
(``tooManyFiles``), a path that is absolute, climbs out with ``..``, holds a backslash, a
drive or control characters (``badPath``), a link or any other special entry read from the
entry's mode bits (``link``, ``specialEntry``), an encrypted entry (``encrypted``), a
compression method other than stored or deflated (``compression``), two entries of one name
(``duplicateName``), an entry larger than a file may be or the files together larger than
allowed (``fileTooLarge``, ``tooLarge``; declared sizes are checked first, and each entry is
read with a hard byte limit, whatever its header says), and an entry that expands far beyond
its compressed size (``compressionRatio``). Nothing in an archive is executed or written to
disk.
"""

from __future__ import annotations

import io
import re
import stat
import unicodedata
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from server.common.errors import InvalidArgument

# How far an entry may expand: more than this many times its compressed size is a bomb.
MAX_COMPRESSION_RATIO = 100
# Below this, no ratio is suspicious (a short run of blanks compresses very well).
RATIO_FLOOR_BYTES = 64 * 1024
_READ_CHUNK = 64 * 1024
# What zip tools of some systems add beside the files: skipped, never stored.
_JUNK = re.compile(r"(^|/)(__MACOSX/.*|\.DS_Store|Thumbs\.db)$")
_DRIVE = re.compile(r"^[A-Za-z]:")
# The fixed time written in every entry, so the same files are always the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def is_junk(path: str) -> bool:
    """Whether ``path`` is what zip tools of some systems add beside the files (a
    ``__MACOSX/`` folder's entry, ``.DS_Store``, ``Thumbs.db``): reading skips it."""
    return _JUNK.search(path) is not None


class ArchiveRefused(InvalidArgument):
    """An archive was refused before anything was written; the reason leads the message
    (``(link) …``). Each kind of archive names its own code in a subclass."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"the archive is refused ({reason}): {message}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """How much one kind of archive may hold."""

    archive_bytes: int
    files: int
    file_bytes: int
    total_bytes: int
    max_path_chars: int = 255
    # What is being read, for messages (``a skill``).
    what: str = "an archive"

    @property
    def entries(self) -> int:
        """Entries listed (folders and the junk some zip tools add included)."""
        return 2 * self.files


def _entry_kind(info: zipfile.ZipInfo) -> str:
    """``file``, ``folder``, ``link`` or ``specialEntry``, from the name and the Unix file
    type bits (an archive made elsewhere has none: a plain file or folder then)."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "link"
    if info.is_dir() or kind == stat.S_IFDIR:
        return "folder"
    if kind not in (0, stat.S_IFREG):
        return "specialEntry"
    return "file"


def _check_name(name: str, limits: ZipLimits, refused: type[ArchiveRefused]) -> None:
    if (
        not name
        or len(name) > limits.max_path_chars
        or name.startswith("/")
        or "\\" in name
        or _DRIVE.match(name)
        or any(ord(ch) < 32 for ch in name)
        or any(part in ("", ".", "..") for part in name.rstrip("/").split("/"))
    ):
        raise refused("badPath", f"{name[:80]!r} is not a plain relative path")


def _read_entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, refused: type[ArchiveRefused]
) -> bytes:
    """The entry's bytes, never more than ``limit`` read whatever its header declares."""
    out = bytearray()
    try:
        with archive.open(info) as entry:
            while chunk := entry.read(min(_READ_CHUNK, limit + 1 - len(out))):
                out += chunk
                if len(out) > limit:
                    raise refused("fileTooLarge", f"{info.filename!r} expands past {limit} bytes")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise refused("notZip", f"{info.filename!r} cannot be read") from exc
    return bytes(out)


def _entries(
    archive: zipfile.ZipFile, limits: ZipLimits, refused: type[ArchiveRefused]
) -> list[zipfile.ZipInfo]:
    """The archive's file entries (name checked), folders and junk left out."""
    infos = archive.infolist()
    if len(infos) > limits.entries:
        raise refused(
            "tooManyFiles",
            f"{len(infos)} entries; {limits.what} has at most {limits.files} files",
        )
    files: list[zipfile.ZipInfo] = []
    seen: set[str] = set()
    declared = 0
    for info in infos:
        name = info.filename
        _check_name(name, limits, refused)
        kind = _entry_kind(info)
        if kind in ("link", "specialEntry"):
            raise refused(kind, f"{name!r} is not a plain file")
        # One name however its letters' case or its accents' form are written: the
        # workspace stores names composed (NFC), so two such entries would be one file.
        folded = unicodedata.normalize("NFC", name).casefold()
        if folded in seen:
            raise refused("duplicateName", f"{name!r} is listed twice")
        seen.add(folded)
        if kind == "folder" or is_junk(name):
            continue
        if info.flag_bits & 0x1:
            raise refused("encrypted", f"{name!r} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise refused("compression", f"{name!r} is compressed in a way not read")
        if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_COMPRESSION_RATIO * max(
            info.compress_size, 1
        ):
            raise refused(
                "compressionRatio", f"{name!r} expands more than {MAX_COMPRESSION_RATIO} times"
            )
        if info.file_size > limits.file_bytes:
            raise refused("fileTooLarge", f"{name!r} is larger than {limits.file_bytes} bytes")
        declared += info.file_size
        if declared > limits.total_bytes:
            raise refused("tooLarge", f"the files hold more than {limits.total_bytes} bytes")
        files.append(info)
    if len(files) > limits.files:
        raise refused("tooManyFiles", f"{limits.what} has at most {limits.files} files")
    return files


def read_zip(data: bytes, limits: ZipLimits, refused: type[ArchiveRefused]) -> dict[str, bytes]:
    """The files of a ``.zip`` by their path in it, every check passed; refused whole
    (``refused``) before any caller writes anything."""
    if len(data) > limits.archive_bytes:
        raise refused("tooLarge", f"an archive may be at most {limits.archive_bytes} bytes")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise refused("notZip", "this is not a zip archive") from exc
    with archive:
        files: dict[str, bytes] = {}
        total = 0
        for info in _entries(archive, limits, refused):
            content = _read_entry(archive, info, limits.file_bytes, refused)
            total += len(content)
            if total > limits.total_bytes:
                raise refused("tooLarge", f"the files hold more than {limits.total_bytes} bytes")
            files[info.filename] = content
    return files


def write_zip(files: Mapping[str, bytes]) -> bytes:
    """A ``.zip`` of ``files`` by path, plain files only, the same bytes each time."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, files[path])
    return out.getvalue()
