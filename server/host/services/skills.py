"""The team's skill store: skills in the open Agent Skills format, every save a version
(history, diff, revert), ``.zip`` import and export, drafts an agent proposes for people to
review, and the skills each agent has.

People reach it through ``skills-v1`` (owners and admins write, members read); agents
through ``load_skill``, ``read_skill_file`` and ``propose_skill``, and their system prompt
lists the names and descriptions of their enabled, saved skills (``prompt_block``).
"""

from __future__ import annotations

import difflib
import json
import secrets
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.protocol import events
from server.db.engine import Database
from server.host.services.skill_archive import (
    MAX_ARCHIVE_BYTES,
    read_skill_archive,
    write_skill_archive,
)
from server.host.services.skill_format import (
    SKILL_FILE,
    SkillDocument,
    check_files,
    check_name,
    check_path,
    parse_skill_md,
    skill_invalid,
    skill_md,
)
from server.host.services.workspace import Member
from server.host.storage.skills import (
    STATE_DRAFT,
    STATE_SAVED,
    AgentSkillText,
    EnabledSkill,
    Skill,
    SkillRepository,
    SkillVersion,
)

Announce = Callable[[str, events.HostEvent], None]
# The files of a new version, made from the skill as it is inside the write that saves it.
MakeFiles = Callable[[AsyncConnection, Skill], Awaitable[Mapping[str, bytes]]]
# (team, agent): raises ``agentNotFound`` when the team has no such agent.
CheckAgent = Callable[[str, str], Awaitable[object]]

# What load_skill and read_skill_file return at most of one text, in characters.
MAX_READ_CHARS = 16_000
# The skills block of a system prompt, in characters: descriptions are cut to fit.
SKILLS_PROMPT_CHARS = 4_500
# The most of one description the block shows (the whole is up to 1,024 characters).
PROMPT_DESCRIPTION_CHARS = 200
MAX_DIFF_LINES = 2_000
MAX_UPLOADS_PER_MEMBER = 2
UPLOAD_SECONDS = 600.0
UPLOAD_CHUNK_BYTES = 128 * 1024
SKILLS_PROMPT_HEADER = (
    "Skills: the team's know-how for tasks like these. Before such a task, call "
    "load_skill with the skill's name and follow what it says; read_skill_file reads a "
    "file it names. A snippet in a skill runs only through run_script."
)


@dataclass(frozen=True, slots=True)
class FileChange:
    """How one file differs between two versions: added, removed or changed, and a unified
    diff of its text (or a line saying a binary file changed)."""

    path: str
    status: str
    diff: str


@dataclass(frozen=True, slots=True)
class SkillContents:
    """One version of a skill: the skill, which version, its parsed ``SKILL.md`` and files."""

    skill: Skill
    version: int
    document: SkillDocument
    files: dict[str, bytes]


@dataclass(eq=False)
class _Upload:
    id: str
    member: Member
    size: int
    expires_at: float
    data: bytearray = field(default_factory=bytearray)


def _not_found(name: str) -> NotFound:
    return NotFound(f"the team has no skill named {name!r}", code="skillNotFound")


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _cut(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit], True


class SkillService:
    """Skills of each team; every read and write names the team."""

    def __init__(
        self, db: Database, clock: Clock, announce: Announce, check_agent: CheckAgent
    ) -> None:
        self._db = db
        self._clock = clock
        self._announce = announce
        self._check_agent = check_agent
        self._repo = SkillRepository()
        self._uploads: dict[str, _Upload] = {}

    # -- reading --------------------------------------------------------------------------

    async def list_skills(self, team_id: str) -> list[tuple[Skill, list[str]]]:
        """Every skill of the team, drafts included, each with the agents it is enabled for."""
        async with self._db.read() as conn:
            found = await self._repo.list_skills(conn, team_id)
            return [(s, await self._repo.list_agents_of_skill(conn, team_id, s.id)) for s in found]

    async def get_skill(self, team_id: str, name: str, version: int | None = None) -> SkillContents:
        """A version of the skill (the newest when none is named), its files whole."""
        skill = await self._skill(team_id, name)
        number = skill.version if version is None else version
        async with self._db.read() as conn:
            files = await self._files(conn, skill, number)
        return SkillContents(skill, number, parse_skill_md(files[SKILL_FILE].decode()), files)

    async def versions(self, team_id: str, name: str) -> tuple[Skill, list[SkillVersion]]:
        skill = await self._skill(team_id, name)
        async with self._db.read() as conn:
            return skill, await self._repo.list_versions(conn, team_id, skill.id)

    async def diff(self, team_id: str, name: str, old: int, new: int) -> list[FileChange]:
        """What changed from version ``old`` to ``new``, file by file (unchanged ones left
        out), each as a unified diff."""
        before = (await self.get_skill(team_id, name, old)).files
        after = (await self.get_skill(team_id, name, new)).files
        changes = []
        for path in sorted(before.keys() | after.keys()):
            a, b = before.get(path), after.get(path)
            if a == b:
                continue
            status = "added" if a is None else "removed" if b is None else "changed"
            changes.append(FileChange(path, status, _unified(path, a, b, old, new)))
        return changes

    async def version_file(self, team_id: str, name: str, version: int | None, path: str) -> bytes:
        """One file of a version of the skill."""
        files = (await self.get_skill(team_id, name, version)).files
        data = files.get(path)
        if data is None:
            raise NotFound(f"{name!r} has no file {path!r}", code="skillFileNotFound")
        return data

    async def export_archive(self, team_id: str, name: str, version: int | None = None) -> bytes:
        """The skill as a ``.zip``: one folder named after it, ``SKILL.md`` at its root."""
        contents = await self.get_skill(team_id, name, version)
        return write_skill_archive(contents.skill.name, contents.files)

    # -- writing --------------------------------------------------------------------------

    async def create(self, member: Member, files: Mapping[str, bytes]) -> Skill:
        """A new skill from its folder's files (checked whole); ``skillNameTaken`` when the
        team has one of its name."""
        document = check_files(files)
        return await self._add(member.team_id, document, files, "created", by=member.account_id)

    async def update(
        self, member: Member, name: str, files: Mapping[str, bytes], *, change: str = "edited"
    ) -> Skill:
        """A new version of the skill with these files; a draft stays a draft."""
        return await self._new_version(member, name, _replacing(files), change)

    async def edit(
        self, member: Member, name: str, written: Mapping[str, bytes], removed: list[str]
    ) -> Skill:
        """A new version from the newest: ``written`` files replace or join, ``removed``
        ones go, the others stay as they are. The newest is read inside the write, so two
        edits at once both land, the second on top of the first."""

        async def edited(conn: AsyncConnection, skill: Skill) -> Mapping[str, bytes]:
            files = await self._files(conn, skill, skill.version)
            for path in removed:
                if files.pop(path, None) is None:
                    raise NotFound(f"{name!r} has no file {path!r}", code="skillFileNotFound")
            files.update(written)
            return files

        return await self._new_version(member, name, edited, "edited")

    async def revert(self, member: Member, name: str, version: int) -> Skill:
        """A new version with the files of ``version``: history keeps every step."""

        async def reverted(conn: AsyncConnection, skill: Skill) -> Mapping[str, bytes]:
            return await self._files(conn, skill, version)

        return await self._new_version(member, name, reverted, "reverted", reverted_from=version)

    async def import_archive(self, member: Member, data: bytes, *, replace: bool) -> Skill:
        """The skill in a ``.zip``, checked whole before anything is written: a new skill,
        or (``replace``) a new version of the team's skill of that name."""
        document, files = read_skill_archive(data)
        team_id, name = member.team_id, document.front.name
        async with self._db.read() as conn:
            existing = await self._repo.get_skill_by_name(conn, team_id, name)
        if existing is not None and replace:
            return await self._new_version(member, name, _replacing(files), "uploaded")
        return await self._add(team_id, document, files, "uploaded", by=member.account_id)

    async def delete(self, member: Member, name: str) -> None:
        skill = await self._skill(member.team_id, name)
        async with self._db.write() as conn:
            await self._repo.remove_skill(conn, member.team_id, skill.id)
        self._changed(skill, "deleted", state="")

    async def save_draft(self, member: Member, name: str) -> Skill:
        """A person reviewed the draft: it is saved, and agents that have it list it."""
        skill = await self._skill(member.team_id, name)
        if skill.state != STATE_DRAFT:
            raise Conflict(f"{name!r} is not a draft", code="skillNotDraft")
        now = self._clock.now()
        async with self._db.write() as conn:
            await self._repo.update_skill(
                conn,
                member.team_id,
                skill.id,
                state=STATE_SAVED,
                updated_at=now,
                updated_by=member.account_id,
            )
        saved = Skill(
            **{
                **{n: getattr(skill, n) for n in skill.__slots__},
                "state": STATE_SAVED,
                "updated_at": now,
                "updated_by": member.account_id,
            }
        )
        self._changed(saved, "saved")
        return saved

    async def discard_draft(self, member: Member, name: str) -> None:
        """A person turned the draft down: it is gone, with its versions."""
        skill = await self._skill(member.team_id, name)
        if skill.state != STATE_DRAFT:
            raise Conflict(f"{name!r} is not a draft", code="skillNotDraft")
        async with self._db.write() as conn:
            await self._repo.remove_skill(conn, member.team_id, skill.id)
        self._changed(skill, "discarded", state="")

    async def propose(
        self,
        team_id: str,
        agent_id: str,
        thread_id: str | None,
        name: str,
        description: str,
        body: str,
    ) -> Skill:
        """An agent's proposal: a draft skill people review, edit and save or discard."""
        files = {SKILL_FILE: skill_md(check_name(name), description, body).encode()}
        document = check_files(files)
        return await self._add(
            team_id,
            document,
            files,
            "proposed",
            by=None,
            state=STATE_DRAFT,
            source=(agent_id, thread_id),
        )

    # -- uploads in chunks ----------------------------------------------------------------

    def start_upload(self, member: Member, size: int) -> _Upload:
        """Begin receiving a ``.zip`` of ``size`` bytes; refused at once past the cap."""
        if size <= 0 or size > MAX_ARCHIVE_BYTES:
            raise InvalidArgument(
                f"an archive is 1 to {MAX_ARCHIVE_BYTES} bytes", code="skillArchiveRefused"
            )
        self._drop_expired()
        if sum(u.member == member for u in self._uploads.values()) >= MAX_UPLOADS_PER_MEMBER:
            raise Conflict(
                f"finish an upload first (at most {MAX_UPLOADS_PER_MEMBER} at a time)",
                code="skillUploadLimit",
            )
        upload = _Upload(secrets.token_hex(16), member, size, self._clock.now() + UPLOAD_SECONDS)
        self._uploads[upload.id] = upload
        return upload

    def upload_chunk(self, member: Member, upload_id: str, offset: int, data: bytes) -> int:
        """Append one chunk at ``offset`` (the bytes received so far); the new count."""
        upload = self._upload(member, upload_id)
        if offset != len(upload.data) or offset + len(data) > upload.size:
            raise InvalidArgument(
                f"the next chunk starts at byte {len(upload.data)} and ends by {upload.size}",
                code="skillUploadInvalid",
            )
        upload.data += data
        upload.expires_at = self._clock.now() + UPLOAD_SECONDS
        return len(upload.data)

    async def finish_upload(self, member: Member, upload_id: str, *, replace: bool) -> Skill:
        upload = self._upload(member, upload_id)
        del self._uploads[upload_id]
        if len(upload.data) != upload.size:
            raise InvalidArgument(
                f"{len(upload.data)} of {upload.size} bytes arrived", code="skillUploadInvalid"
            )
        return await self.import_archive(member, bytes(upload.data), replace=replace)

    def _upload(self, member: Member, upload_id: str) -> _Upload:
        self._drop_expired()
        upload = self._uploads.get(upload_id)
        if upload is None or upload.member != member:
            raise NotFound("no such upload; it may have expired", code="skillUploadNotFound")
        return upload

    def _drop_expired(self) -> None:
        now = self._clock.now()
        for upload in [u for u in self._uploads.values() if u.expires_at <= now]:
            del self._uploads[upload.id]

    # -- agents ---------------------------------------------------------------------------

    async def enable(self, member: Member, agent_id: str, name: str, *, enabled: bool) -> bool:
        """Give the agent the skill, or take it away; whether anything changed."""
        await self._check_agent(member.team_id, agent_id)
        skill = await self._skill(member.team_id, name)
        async with self._db.write() as conn:
            if enabled:
                changed = await self._repo.add_agent_skill(
                    conn, member.team_id, agent_id, skill.id, self._clock.now(), member.account_id
                )
            else:
                changed = await self._repo.remove_agent_skill(
                    conn, member.team_id, agent_id, skill.id
                )
        if changed:
            self._changed(skill, "enabled" if enabled else "disabled", agent_id=agent_id)
        return changed

    async def agent_skills(self, team_id: str, agent_id: str) -> list[EnabledSkill]:
        """The saved skills the agent has (what its system prompt lists)."""
        async with self._db.read() as conn:
            return await self._repo.list_enabled(conn, team_id, agent_id)

    async def skills_of_agent(self, team_id: str, agent_id: str) -> list[EnabledSkill]:
        """The agent's saved skills, for people: ``agentNotFound`` for no such agent."""
        await self._check_agent(team_id, agent_id)
        return await self.agent_skills(team_id, agent_id)

    async def agent_deleted(self, team_id: str, agent_id: str) -> None:
        async with self._db.write() as conn:
            await self._repo.remove_agent_skills(conn, team_id, agent_id)

    async def prompt_block(self, team_id: str, agent_id: str) -> str:
        """The system prompt's list of the agent's skills: names and descriptions only
        (cut to fit ``SKILLS_PROMPT_CHARS``); empty when it has none."""
        return skills_prompt(await self.agent_skills(team_id, agent_id))

    async def load(self, team_id: str, agent_id: str, name: str) -> tuple[str, list[str], bool]:
        """What ``load_skill`` gives the agent: the body of ``SKILL.md`` (capped), the other
        files' paths, and whether the body was cut."""
        found = await self._agent_skill(team_id, agent_id, name)
        text, cut = _cut(parse_skill_md(found.skill_md).body, MAX_READ_CHARS)
        return text, found.paths, cut

    async def read_file(
        self, team_id: str, agent_id: str, name: str, path: str
    ) -> tuple[str, int, bool]:
        """What ``read_skill_file`` gives the agent: one text file of the skill (capped),
        its size in bytes, and whether it was cut; a binary file is refused."""
        path = check_path(path)
        found = await self._agent_skill(team_id, agent_id, name)
        async with self._db.read() as conn:
            data = await self._repo.get_file(conn, team_id, found.skill_id, found.version, path)
        if data is None:
            raise NotFound(f"{name!r} has no file {path!r}", code="skillFileNotFound")
        text = _text(data)
        if text is None:
            raise InvalidArgument(f"{path!r} is not text", code="skillFileNotText")
        cut_text, cut = _cut(text, MAX_READ_CHARS)
        return cut_text, len(data), cut

    # -- inside ---------------------------------------------------------------------------

    async def _skill(self, team_id: str, name: str) -> Skill:
        async with self._db.read() as conn:
            skill = await self._repo.get_skill_by_name(conn, team_id, name)
        if skill is None:
            raise _not_found(name)
        return skill

    async def _agent_skill(self, team_id: str, agent_id: str, name: str) -> AgentSkillText:
        """A saved skill the agent has; any other is unknown to it."""
        found = await self._repo.get_enabled_skill(self._db, team_id, agent_id, name)
        if found is None:
            raise NotFound(f"you have no skill named {name!r}", code="skillNotFound")
        return found

    async def _add(
        self,
        team_id: str,
        document: SkillDocument,
        files: Mapping[str, bytes],
        change: str,
        *,
        by: str | None,
        state: str = STATE_SAVED,
        source: tuple[str, str | None] = ("", None),
    ) -> Skill:
        now = self._clock.now()
        front = document.front
        skill = Skill(
            id=uuid.uuid4().hex,
            team_id=team_id,
            name=front.name,
            description=front.description,
            state=state,
            version=1,
            created_at=now,
            created_by=by,
            updated_at=now,
            updated_by=by,
            source_agent_id=source[0] or None,
            source_thread_id=source[1],
        )
        async with self._db.write() as conn:
            if await self._repo.get_skill_by_name(conn, team_id, front.name) is not None:
                raise Conflict(
                    f"the team has a skill named {front.name!r} already", code="skillNameTaken"
                )
            await self._repo.add_skill(conn, skill, files[SKILL_FILE].decode(), _paths(files))
            await self._repo.add_version(
                conn,
                _version(skill, 1, change, files, by, now, description=front.description),
                files,
            )
        self._changed(skill, change)
        return skill

    async def _files(self, conn: AsyncConnection, skill: Skill, number: int) -> dict[str, bytes]:
        files = await self._repo.get_files(conn, skill.team_id, skill.id, number)
        if files is None:
            raise NotFound(f"{skill.name!r} has no version {number}", code="skillVersionNotFound")
        return files

    async def _new_version(
        self,
        member: Member,
        name: str,
        make_files: MakeFiles,
        change: str,
        *,
        reverted_from: int | None = None,
    ) -> Skill:
        """A new version of the team's skill ``name`` with the files ``make_files`` makes
        from it. The skill is read and its row locked inside the write, and every row
        written is that skill's: two saves at once make two versions, the second made from
        the first, and a skill deleted and made again meanwhile gets the version whole."""
        now, by = self._clock.now(), member.account_id
        async with self._db.write() as conn:
            current = await self._repo.get_skill_by_name(
                conn, member.team_id, name, for_update=True
            )
            if current is None:
                raise _not_found(name)
            files = await make_files(conn, current)
            document = _checked(name, files)
            number = current.version + 1
            version = _version(
                current,
                number,
                change,
                files,
                by,
                now,
                reverted_from,
                description=document.front.description,
            )
            await self._repo.add_version(conn, version, files)
            await self._repo.update_skill(
                conn,
                current.team_id,
                current.id,
                version=number,
                description=document.front.description,
                updated_at=now,
                updated_by=by,
                skill_md=files[SKILL_FILE].decode(),
                paths=json.dumps(_paths(files)),
            )
        updated = Skill(
            **{
                **{n: getattr(current, n) for n in current.__slots__},
                "version": number,
                "description": document.front.description,
                "updated_at": now,
                "updated_by": by,
            }
        )
        self._changed(updated, change)
        return updated

    def _changed(
        self, skill: Skill, change: str, *, state: str | None = None, agent_id: str | None = None
    ) -> None:
        self._announce(
            skill.team_id,
            events.SkillsChanged(
                name=skill.name,
                change=change,
                state=skill.state if state is None else state,
                version=skill.version,
                agent_id=agent_id,
            ),
        )


def _replacing(files: Mapping[str, bytes]) -> MakeFiles:
    """Files that replace the skill's whole, whatever it holds now."""

    async def make(conn: AsyncConnection, skill: Skill) -> Mapping[str, bytes]:
        return files

    return make


def _checked(name: str, files: Mapping[str, bytes]) -> SkillDocument:
    """The parsed ``SKILL.md`` of a new version's files, checked whole; its name must stay."""
    document = check_files(files)
    if document.front.name != name:
        raise skill_invalid(
            f"{SKILL_FILE} names the skill {document.front.name!r}; it must stay {name!r}",
            field="name",
        )
    return document


def _paths(files: Mapping[str, bytes]) -> list[str]:
    """The paths of a skill's files other than SKILL.md, in order."""
    return sorted(path for path in files if path != SKILL_FILE)


def _version(
    skill: Skill,
    number: int,
    change: str,
    files: Mapping[str, bytes],
    by: str | None,
    at: float,
    reverted_from: int | None = None,
    *,
    description: str,
) -> SkillVersion:
    return SkillVersion(
        skill_id=skill.id,
        version=number,
        team_id=skill.team_id,
        description=description,
        change=change,
        reverted_from=reverted_from,
        files=len(files),
        size=sum(len(data) for data in files.values()),
        created_at=at,
        created_by=by,
    )


def _unified(path: str, a: bytes | None, b: bytes | None, old: int, new: int) -> str:
    """A unified diff of one file's text; a line for a binary one."""
    before, after = _text(a or b""), _text(b or b"")
    if before is None or after is None:
        return f"binary file {path} changed ({len(a or b'')} -> {len(b or b'')} bytes)\n"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"v{old}/{path}" if a is not None else "/dev/null",
        tofile=f"v{new}/{path}" if b is not None else "/dev/null",
    )
    out = []
    for n, line in enumerate(lines):
        if n >= MAX_DIFF_LINES:
            out.append(f"... the diff goes on past {MAX_DIFF_LINES} lines\n")
            break
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def skills_prompt(skills: list[EnabledSkill]) -> str:
    """The skills block: a header and one line per skill, ``- name: description``, each
    description cut at a word to at most ``PROMPT_DESCRIPTION_CHARS`` and to share
    ``SKILLS_PROMPT_CHARS`` evenly; when not all fit, a last line says how many more there
    are, within the cap too. Empty for none."""
    if not skills:
        return ""
    room = SKILLS_PROMPT_CHARS - len(SKILLS_PROMPT_HEADER) - 1
    lines: list[str] = []
    used = 0
    for left, skill in zip(range(len(skills), 0, -1), skills, strict=True):
        line = f"- {skill.name}"
        space = min((room - used) // left - len(line) - 2, PROMPT_DESCRIPTION_CHARS)
        if space >= 12:
            line += ": " + _shorten(skill.description, space)
        if used + len(line) + 1 > room:
            break
        lines.append(line)
        used += len(line) + 1
    while len(lines) < len(skills):
        more = f"- and {len(skills) - len(lines)} more (load_skill takes any of them by name)"
        if used + len(more) <= room:
            lines.append(more)
            break
        used -= len(lines.pop()) + 1
    return SKILLS_PROMPT_HEADER + "\n" + "\n".join(lines)


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,.;:")
    return cut + "…"
