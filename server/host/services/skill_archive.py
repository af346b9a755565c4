"""A skill as a ``.zip``: read one checked whole before anything is written, and write one in
the layout other agent tools use (one folder named after the skill, ``SKILL.md`` at its
root).

Reading applies the checks of ``zip_archive`` (size, file count, paths, no links, no
bombs) with a skill's limits and the code ``skillArchiveRefused``, then refuses a layout other
than ``SKILL.md`` at the root or in one top folder (``layout``; the folder must be named as the
skill, ``folderName``). Nothing in an archive is executed or written to disk.
"""

from __future__ import annotations

from server.host.services.skill_format import (
    MAX_FILE_BYTES,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    SKILL_FILE,
    SkillDocument,
    check_files,
)
from server.host.services.zip_archive import ArchiveRefused, ZipLimits, read_zip, write_zip

# The largest archive taken in (a skill's files hold at most 2 MiB, stored or deflated).
MAX_ARCHIVE_BYTES = 3 * 1024 * 1024
LIMITS = ZipLimits(
    archive_bytes=MAX_ARCHIVE_BYTES,
    files=MAX_SKILL_FILES,
    file_bytes=MAX_FILE_BYTES,
    total_bytes=MAX_SKILL_BYTES,
    # An entry's name holds the skill's folder too; its path inside is checked after.
    max_path_chars=MAX_NAME_CHARS + 1 + MAX_PATH_CHARS,
    what="a skill",
)


class SkillArchiveRefused(ArchiveRefused):
    """A skill archive was refused before anything was written; the reason leads the
    message (``(link) …``)."""

    code = "skillArchiveRefused"


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
    found = read_zip(data, LIMITS, SkillArchiveRefused)
    root = _root(list(found))
    files: dict[str, bytes] = {}
    for name, content in found.items():
        if not name.startswith(root):
            raise SkillArchiveRefused("layout", f"{name!r} is outside the skill's folder")
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
    return write_zip({f"{name}/{path}": data for path, data in files.items()})
