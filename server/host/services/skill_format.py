"""The open Agent Skills format: a skill is a folder whose ``SKILL.md`` starts with YAML front
matter (``name``, ``description`` and the optional ``license``, ``compatibility``,
``metadata``, ``allowed-tools``), followed by Markdown instructions; any other files
(references, templates, snippets) sit beside it.

``check_files`` checks a whole folder (paths, sizes, the front matter) before anything is
written, and says what is wrong with the stable code ``skillInvalid``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from server.common.errors import InvalidArgument
from server.host.services.zip_archive import is_junk
from server.host.workspace.paths import workspace_parts

SKILL_FILE = "SKILL.md"
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
MAX_LICENSE_CHARS = 200
MAX_METADATA_ENTRIES = 50
MAX_METADATA_CHARS = 500
MAX_ALLOWED_TOOLS_CHARS = 1000
# A skill's folder: how many files, how large each and all of them, how deep a path.
MAX_SKILL_FILES = 100
MAX_FILE_BYTES = 512 * 1024
MAX_SKILL_BYTES = 2 * 1024 * 1024
MAX_PATH_CHARS = 255
MAX_PATH_DEPTH = 8
MAX_FRONT_MATTER_CHARS = 8 * 1024
# How deep the front matter's [ ] and { } may nest: its fields are flat but for metadata,
# and the YAML parser takes seconds over a few thousand levels before it gives up.
MAX_FRONT_MATTER_NESTING = 16

FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def skill_invalid(message: str, *, field: str | None = None) -> InvalidArgument:
    return InvalidArgument(message, code="skillInvalid", field=field)


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """What a skill's ``SKILL.md`` says of itself."""

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    allowed_tools: str | None = None


@dataclass(frozen=True, slots=True)
class SkillDocument:
    """A parsed ``SKILL.md``: its front matter and its Markdown body."""

    front: FrontMatter
    body: str


def check_name(name: str) -> str:
    """``name`` when it is a skill's name: 1 to 64 lowercase letters, digits and single
    hyphens, neither first nor last."""
    if not name or len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name):
        raise skill_invalid(
            f"a skill's name is 1 to {MAX_NAME_CHARS} lowercase letters, digits and hyphens, "
            "not starting or ending with a hyphen nor holding two in a row",
            field="name",
        )
    return name


def _text_field(front: Mapping[str, Any], key: str, limit: int, *, required: bool) -> str | None:
    value = front.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise skill_invalid(f"{SKILL_FILE}: {key} must be a non-empty text", field=key)
    value = value.strip()
    if len(value) > limit:
        raise skill_invalid(f"{SKILL_FILE}: {key} may be at most {limit} characters", field=key)
    return value


def _metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_METADATA_ENTRIES:
        raise skill_invalid(
            f"{SKILL_FILE}: metadata must map at most {MAX_METADATA_ENTRIES} keys to texts",
            field="metadata",
        )
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str | int | float | bool):
            raise skill_invalid(f"{SKILL_FILE}: metadata maps texts to texts", field="metadata")
        text = str(item)
        if len(key) > MAX_NAME_CHARS or len(text) > MAX_METADATA_CHARS:
            raise skill_invalid(f"{SKILL_FILE}: metadata {key!r} is too long", field="metadata")
        out[key] = text
    return out


def _nesting(text: str) -> int:
    """The deepest the brackets and braces of ``text`` go (those in quotes counted too)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def parse_skill_md(text: str) -> SkillDocument:
    """The front matter and body of a ``SKILL.md``; ``skillInvalid`` names what is wrong."""
    found = _FRONT_MATTER.match(text.removeprefix("\ufeff"))
    if found is None:
        raise skill_invalid(
            f"{SKILL_FILE} must start with YAML front matter between two '---' lines"
        )
    if len(found.group(1)) > MAX_FRONT_MATTER_CHARS:
        raise skill_invalid(f"{SKILL_FILE}: the front matter is too long")
    if _nesting(found.group(1)) > MAX_FRONT_MATTER_NESTING:
        raise skill_invalid(
            f"{SKILL_FILE}: the front matter nests deeper than {MAX_FRONT_MATTER_NESTING} levels"
        )
    try:
        # The safe loader builds plain data only: no tags, no objects.
        front = yaml.safe_load(found.group(1))
    except (yaml.YAMLError, RecursionError) as exc:  # nested past the parser's depth too
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        raise skill_invalid(f"{SKILL_FILE}: the front matter is not valid YAML{line}") from None
    if not isinstance(front, dict):
        raise skill_invalid(f"{SKILL_FILE}: the front matter must be a mapping of fields")
    unknown = sorted(str(key) for key in front if key not in FIELDS)
    if unknown:
        raise skill_invalid(
            f"{SKILL_FILE}: unknown front matter field {unknown[0]!r} (put your own under "
            "metadata)",
            field=unknown[0],
        )
    name = front.get("name")
    if not isinstance(name, str):
        raise skill_invalid(f"{SKILL_FILE}: name is missing", field="name")
    description = _text_field(front, "description", MAX_DESCRIPTION_CHARS, required=True)
    assert description is not None  # required
    matter = FrontMatter(
        name=check_name(name),
        description=" ".join(description.split()),
        license=_text_field(front, "license", MAX_LICENSE_CHARS, required=False),
        compatibility=_text_field(front, "compatibility", MAX_COMPATIBILITY_CHARS, required=False),
        metadata=_metadata(front.get("metadata")),
        allowed_tools=_text_field(front, "allowed-tools", MAX_ALLOWED_TOOLS_CHARS, required=False),
    )
    return SkillDocument(matter, text[found.end() :].lstrip("\r\n"))


def skill_md(name: str, description: str, body: str) -> str:
    """A ``SKILL.md`` with the given name, description and body (front matter written
    with the YAML dumper, so any text is quoted as it needs)."""
    front = yaml.safe_dump(
        {"name": name, "description": description},
        allow_unicode=True,
        sort_keys=False,
        width=10_000,
    )
    return f"---\n{front}---\n\n{body.strip()}\n"


def check_path(path: str) -> str:
    """A file's path inside a skill: relative, ``/``-separated, no ``.``/``..``, no
    backslash or control characters, at most ``MAX_PATH_DEPTH`` parts."""
    if len(path) > MAX_PATH_CHARS:
        raise skill_invalid(f"a path may be at most {MAX_PATH_CHARS} characters", field="path")
    try:
        parts = workspace_parts(path)
    except InvalidArgument as exc:
        raise skill_invalid(f"{path!r}: {exc.message}", field="path") from None
    if len(parts) > MAX_PATH_DEPTH:
        raise skill_invalid(f"a path may be at most {MAX_PATH_DEPTH} folders deep", field="path")
    return "/".join(parts)


def check_files(files: Mapping[str, bytes]) -> SkillDocument:
    """A skill folder's files, checked whole: paths, how many and how large, and ``SKILL.md``
    at the root with valid front matter. Returns the parsed ``SKILL.md``."""
    if len(files) > MAX_SKILL_FILES:
        raise skill_invalid(f"a skill has at most {MAX_SKILL_FILES} files")
    total = 0
    for path, data in files.items():
        if check_path(path) != path:
            raise skill_invalid(f"{path!r} is not a plain path", field="path")
        # Reading a .zip skips these, so a skill holding one would lose it on a round trip.
        if is_junk(path):
            raise skill_invalid(
                f"{path!r} is a file zip tools add (__MACOSX/, .DS_Store, Thumbs.db); "
                "a skill does not hold one",
                field="path",
            )
        if len(data) > MAX_FILE_BYTES:
            raise skill_invalid(f"{path!r} is larger than {MAX_FILE_BYTES} bytes", field="path")
        total += len(data)
    if total > MAX_SKILL_BYTES:
        raise skill_invalid(f"a skill's files hold at most {MAX_SKILL_BYTES} bytes")
    folded: set[str] = set()
    for path in files:
        if path.casefold() in folded:
            raise skill_invalid(f"{path!r} differs from another file only in case", field="path")
        folded.add(path.casefold())
    raw = files.get(SKILL_FILE)
    if raw is None:
        raise skill_invalid(f"a skill needs {SKILL_FILE} at its root")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise skill_invalid(f"{SKILL_FILE} is not UTF-8 text") from None
    return parse_skill_md(text)
