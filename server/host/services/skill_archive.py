"""A skill as a ``.zip``: read one checked whole before anything is written, and write one in
the layout other agent tools use (one folder named after the skill, ``SKILL.md`` at its
root).

Reading refuses, with ``skillArchiveRefused`` and a reason word in the message: an archive
too large (``tooLarge``), not a zip (``notZip``), too many entries (``tooManyFiles``), a path
that is absolute, climbs out with ``..``, holds a backslash, a drive or control characters
(``badPath``), a link or any other special entry read from the entry's mode bits
(``link``, ``specialEntry``), an encrypted entry (``encrypted``), a compression method other
than stored or deflated (``compression``), two entries of one name (``duplicateName``), an
entry larger than a file may be or the files together larger than a skill may be
(``fileTooLarge``, ``tooLarge``; declared sizes are checked first, and each entry is read
with a hard byte limit, whatever its header says), an entry that expands far beyond its
compressed size (``compressionRatio``), and a layout other than ``SKILL.md`` at the root or
in one top folder (``layout``; the folder must be named as the skill, ``folderName``).
Nothing in an archive is executed or written to disk.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
import zlib

from server.common.errors import InvalidArgument
from server.host.services.skill_format import (
    MAX_FILE_BYTES,
    MAX_PATH_CHARS,
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SKILL_FILE,
    SkillDocument,
    check_files,
)

# The largest archive taken in (a skill's files hold at most 2 MiB, stored or deflated).
MAX_ARCHIVE_BYTES = 3 * 1024 * 1024
# Entries (folders and the junk some zip tools add included) an archive may list.
MAX_ARCHIVE_ENTRIES = 2 * MAX_SKILL_FILES
# How far an entry may expand: more than this many times its compressed size is a bomb.
MAX_COMPRESSION_RATIO = 100
# Below this, no ratio is suspicious (a short run of blanks compresses very well).
RATIO_FLOOR_BYTES = 64 * 1024
_READ_CHUNK = 64 * 1024
# What zip tools of some systems add beside the files: skipped, never stored.
_JUNK = re.compile(r"(^|/)(__MACOSX/.*|\.DS_Store|Thumbs\.db)$")
_DRIVE = re.compile(r"^[A-Za-z]:")
# The fixed time written in every entry, so one skill version is always the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)


class SkillArchiveRefused(InvalidArgument):
    """A skill archive was refused before anything was written; the reason leads the
    message (``(link) …``)."""

    code = "skillArchiveRefused"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"the archive is refused ({reason}): {message}")
        self.reason = reason


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


def _check_name(name: str) -> None:
    if (
        not name
        or len(name) > MAX_PATH_CHARS
        or name.startswith("/")
        or "\\" in name
        or _DRIVE.match(name)
        or any(ord(ch) < 32 for ch in name)
        or any(part in ("", ".", "..") for part in name.rstrip("/").split("/"))
    ):
        raise SkillArchiveRefused("badPath", f"{name[:80]!r} is not a plain relative path")


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """The entry's bytes, never more than ``limit`` read whatever its header declares."""
    out = bytearray()
    try:
        with archive.open(info) as entry:
            while chunk := entry.read(min(_READ_CHUNK, limit + 1 - len(out))):
                out += chunk
                if len(out) > limit:
                    raise SkillArchiveRefused(
                        "fileTooLarge", f"{info.filename!r} expands past {MAX_FILE_BYTES} bytes"
                    )
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise SkillArchiveRefused("notZip", f"{info.filename!r} cannot be read") from exc
    return bytes(out)


def _entries(archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, str]]:
    """The archive's file entries (name checked), folders and junk left out."""
    infos = archive.infolist()
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        raise SkillArchiveRefused(
            "tooManyFiles", f"{len(infos)} entries; a skill has at most {MAX_SKILL_FILES} files"
        )
    files: list[tuple[zipfile.ZipInfo, str]] = []
    seen: set[str] = set()
    declared = 0
    for info in infos:
        name = info.filename
        _check_name(name)
        kind = _entry_kind(info)
        if kind in ("link", "specialEntry"):
            raise SkillArchiveRefused(kind, f"{name!r} is not a plain file")
        if name.casefold() in seen:
            raise SkillArchiveRefused("duplicateName", f"{name!r} is listed twice")
        seen.add(name.casefold())
        if kind == "folder" or _JUNK.search(name):
            continue
        if info.flag_bits & 0x1:
            raise SkillArchiveRefused("encrypted", f"{name!r} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise SkillArchiveRefused("compression", f"{name!r} is compressed in a way not read")
        if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_COMPRESSION_RATIO * max(
            info.compress_size, 1
        ):
            raise SkillArchiveRefused(
                "compressionRatio", f"{name!r} expands more than {MAX_COMPRESSION_RATIO} times"
            )
        if info.file_size > MAX_FILE_BYTES:
            raise SkillArchiveRefused(
                "fileTooLarge", f"{name!r} is larger than {MAX_FILE_BYTES} bytes"
            )
        declared += info.file_size
        if declared > MAX_SKILL_BYTES:
            raise SkillArchiveRefused(
                "tooLarge", f"the files hold more than {MAX_SKILL_BYTES} bytes"
            )
        files.append((info, name))
    if len(files) > MAX_SKILL_FILES:
        raise SkillArchiveRefused("tooManyFiles", f"a skill has at most {MAX_SKILL_FILES} files")
    return files


def _root(names: list[str]) -> str:
    """The folder the skill sits in: ``""`` when ``SKILL.md`` is at the root, else the one
    top folder every file is in, holding ``SKILL.md``."""
    if SKILL_FILE in names:
        return ""
    tops = {name.split("/", 1)[0] for name in names}
    if len(tops) == 1 and "/" in names[0]:
        top = tops.pop()
        if f"{top}/{SKILL_FILE}" in names:
            return top + "/"
    raise SkillArchiveRefused(
        "layout", f"{SKILL_FILE} must be at the root of the archive or of its one top folder"
    )


def read_skill_archive(data: bytes) -> tuple[SkillDocument, dict[str, bytes]]:
    """The skill in a ``.zip``: its parsed ``SKILL.md`` and its files by path inside the
    skill's folder. Refused whole (``skillArchiveRefused``, ``skillInvalid``) before any
    caller writes anything."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise SkillArchiveRefused(
            "tooLarge", f"an archive may be at most {MAX_ARCHIVE_BYTES} bytes"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise SkillArchiveRefused("notZip", "this is not a zip archive") from exc
    with archive:
        entries = _entries(archive)
        root = _root([name for _, name in entries])
        files: dict[str, bytes] = {}
        total = 0
        for info, name in entries:
            if not name.startswith(root):
                raise SkillArchiveRefused("layout", f"{name!r} is outside the skill's folder")
            content = _read_entry(archive, info, MAX_FILE_BYTES)
            total += len(content)
            if total > MAX_SKILL_BYTES:
                raise SkillArchiveRefused(
                    "tooLarge", f"the files hold more than {MAX_SKILL_BYTES} bytes"
                )
            files[name[len(root) :]] = content
    document = check_files(files)
    if root and root[:-1] != document.front.name:
        raise SkillArchiveRefused(
            "folderName",
            f"the folder {root[:-1]!r} must be named as the skill, {document.front.name!r}",
        )
    return document, files


def write_skill_archive(name: str, files: dict[str, bytes]) -> bytes:
    """A ``.zip`` of one folder ``name/`` with the skill's files, the same bytes each time."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(f"{name}/{path}", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, files[path])
    return out.getvalue()
