"""``skills-v1``: the team's skills (folders in the open Agent Skills format).

Members read (list, get, a file, versions, diff, download, an agent's skills); owners and
admins write (create, update, upload a ``.zip`` in chunks, revert, delete, save or discard
a draft an agent proposed) and choose each agent's skills. Every save is a version.
"""

from __future__ import annotations

import base64
from typing import Annotated

from pydantic import Field, StringConstraints

from server.common.protocol.ids import AgentId, UploadId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.routes.workspace import Chunk
from server.host.rtc.team_api import HostRouteTable
from server.host.services.skill_format import (
    MAX_FILE_BYTES,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    MAX_SKILL_FILES,
    SKILL_FILE,
)
from server.host.services.skills import UPLOAD_CHUNK_BYTES
from server.host.storage.skills import Skill, SkillVersion

routes = HostRouteTable("skills-v1")

# The most text one answer carries of a file or a diff; the .zip has everything.
MAX_ANSWER_CHARS = 120_000

SkillName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS)]
FilePath = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATH_CHARS)]
FileText = Annotated[str, StringConstraints(max_length=MAX_FILE_BYTES)]
Version = Annotated[WireInt, Field(ge=1)]


class SkillView(WireModel):
    name: str
    description: str
    state: str = Field(description="draft (proposed by an agent, not listed to agents) or saved")
    version: int = Field(description="the newest version, the one agents read")
    created_at: float
    created_by: str | None
    updated_at: float
    updated_by: str | None
    proposed_by_agent: str | None = Field(description="the agent that proposed the draft")
    proposed_in_thread: str | None
    agents: list[str] = Field(default_factory=list, description="agents that have it")


class SkillList(WireModel):
    skills: list[SkillView]


class FileView(WireModel):
    path: str
    size: int
    text: bool = Field(description="UTF-8 text (false: binary)")


class SkillDetail(WireModel):
    skill: SkillView
    version: int
    skill_md: str = Field(description="the whole SKILL.md, front matter included")
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    allowed_tools: str | None
    files: list[FileView]


class FileContents(WireModel):
    path: str
    size: int
    text: str | None = Field(description="the file's text; null for a binary file")
    truncated: bool


class VersionView(WireModel):
    version: int
    description: str
    change: str = Field(description="created, edited, uploaded, proposed or reverted")
    reverted_from: int | None
    files: int
    size: int
    created_at: float
    created_by: str | None


class VersionList(WireModel):
    name: str
    versions: list[VersionView]


class FileChangeView(WireModel):
    path: str
    status: str = Field(description="added, removed or changed")
    diff: str = Field(description="a unified diff of the file's text")


class SkillDiff(WireModel):
    changes: list[FileChangeView]
    truncated: bool


class SkillDownload(WireModel):
    file_name: str
    data: str = Field(description="base64 of the .zip's bytes from offset")
    offset: int
    size: int
    eof: bool


class SkillUploadStarted(WireModel):
    upload_id: str
    chunk_bytes: int


class SkillUploadProgress(WireModel):
    received: int


class SkillDone(WireModel):
    done: bool


class EnabledView(WireModel):
    name: str
    description: str


class AgentSkills(WireModel):
    agent_id: str
    skills: list[EnabledView]


class SkillRef(InboundModel):
    name: SkillName


class GetSkill(SkillRef):
    version: Version | None = Field(default=None, description="none: the newest")


class ReadFile(GetSkill):
    path: FilePath


class CreateSkill(InboundModel):
    files: dict[FilePath, FileText] = Field(
        max_length=MAX_SKILL_FILES, description=f"text files by path; {SKILL_FILE} among them"
    )


class UpdateSkill(SkillRef):
    files: dict[FilePath, FileText] = Field(
        default_factory=dict,
        max_length=MAX_SKILL_FILES,
        description="files to write, by path; the others stay as they are",
    )
    remove: list[FilePath] = Field(default_factory=list, max_length=MAX_SKILL_FILES)


class DiffArgs(SkillRef):
    old: Version = Field(description="the version to compare from")
    new: Version = Field(description="the version to compare to")


class RevertArgs(SkillRef):
    version: Version


class SkillDownloadArgs(GetSkill):
    offset: WireInt = 0


class SkillUploadStart(InboundModel):
    size: WireInt


class SkillUploadChunk(InboundModel):
    upload_id: UploadId
    offset: WireInt
    data: Chunk


class FinishUpload(InboundModel):
    upload_id: UploadId
    replace: bool = Field(
        default=False, description="a new version of the skill of that name, if the team has one"
    )


class EnableArgs(SkillRef):
    agent_id: AgentId
    enabled: bool


class SkillsOfAgent(InboundModel):
    agent_id: AgentId


def skill_view(skill: Skill, agents: list[str] | None = None) -> SkillView:
    return SkillView(
        name=skill.name,
        description=skill.description,
        state=skill.state,
        version=skill.version,
        created_at=skill.created_at,
        created_by=skill.created_by,
        updated_at=skill.updated_at,
        updated_by=skill.updated_by,
        proposed_by_agent=skill.source_agent_id,
        proposed_in_thread=skill.source_thread_id,
        agents=agents or [],
    )


def _version_view(version: SkillVersion) -> VersionView:
    return VersionView(
        version=version.version,
        description=version.description,
        change=version.change,
        reverted_from=version.reverted_from,
        files=version.files,
        size=version.size,
        created_at=version.created_at,
        created_by=version.created_by,
    )


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@routes.route("skills-v1/list", args=NoArgs, least_role=Role.MEMBER)
async def list_skills(call: HostCall, args: NoArgs) -> SkillList:
    """Every skill of the team, drafts included, by name."""
    found = await call.host.skills.list_skills(call.member.team_id)
    return SkillList(skills=[skill_view(skill, agents) for skill, agents in found])


@routes.route("skills-v1/get", args=GetSkill, least_role=Role.MEMBER)
async def get_skill(call: HostCall, args: GetSkill) -> SkillDetail:
    """One version of a skill: its SKILL.md and the list of its files."""
    got = await call.host.skills.get_skill(call.member.team_id, args.name, args.version)
    front = got.document.front
    return SkillDetail(
        skill=skill_view(got.skill),
        version=got.version,
        skill_md=got.files[SKILL_FILE].decode()[:MAX_ANSWER_CHARS],
        license=front.license,
        compatibility=front.compatibility,
        metadata=dict(front.metadata),
        allowed_tools=front.allowed_tools,
        files=[FileView(path=p, size=len(d), text=_is_text(d)) for p, d in got.files.items()],
    )


@routes.route("skills-v1/read_file", args=ReadFile, least_role=Role.MEMBER)
async def read_file(call: HostCall, args: ReadFile) -> FileContents:
    """One file of a version, as text (null for a binary file)."""
    data = await call.host.skills.version_file(
        call.member.team_id, args.name, args.version, args.path
    )
    text = data.decode() if _is_text(data) else None
    return FileContents(
        path=args.path,
        size=len(data),
        text=None if text is None else text[:MAX_ANSWER_CHARS],
        truncated=text is not None and len(text) > MAX_ANSWER_CHARS,
    )


@routes.route("skills-v1/create", args=CreateSkill, least_role=Role.ADMIN)
async def create_skill(call: HostCall, args: CreateSkill) -> SkillView:
    """A new skill from its text files; its name is the one SKILL.md gives."""
    files = {path: text.encode() for path, text in args.files.items()}
    return skill_view(await call.host.skills.create(call.member, files))


@routes.route("skills-v1/update", args=UpdateSkill, least_role=Role.ADMIN)
async def update_skill(call: HostCall, args: UpdateSkill) -> SkillView:
    """A new version: the files given written, those in ``remove`` gone, the rest kept."""
    files = {path: text.encode() for path, text in args.files.items()}
    skill = await call.host.skills.edit(call.member, args.name, files, args.remove)
    return skill_view(skill)


@routes.route("skills-v1/delete", args=SkillRef, least_role=Role.ADMIN)
async def delete_skill(call: HostCall, args: SkillRef) -> SkillDone:
    """The skill and every version of it; agents that had it no longer do."""
    await call.host.skills.delete(call.member, args.name)
    return SkillDone(done=True)


@routes.route("skills-v1/versions", args=SkillRef, least_role=Role.MEMBER)
async def versions(call: HostCall, args: SkillRef) -> VersionList:
    """Every version of the skill, newest first."""
    skill, found = await call.host.skills.versions(call.member.team_id, args.name)
    return VersionList(name=skill.name, versions=[_version_view(v) for v in found])


@routes.route("skills-v1/diff", args=DiffArgs, least_role=Role.MEMBER)
async def diff(call: HostCall, args: DiffArgs) -> SkillDiff:
    """What changed between two versions, file by file, as unified diffs."""
    changes = await call.host.skills.diff(call.member.team_id, args.name, args.old, args.new)
    views: list[FileChangeView] = []
    room = MAX_ANSWER_CHARS
    for change in changes:
        if len(change.diff) > room:
            return SkillDiff(changes=views, truncated=True)
        room -= len(change.diff)
        views.append(FileChangeView(path=change.path, status=change.status, diff=change.diff))
    return SkillDiff(changes=views, truncated=False)


@routes.route("skills-v1/revert", args=RevertArgs, least_role=Role.ADMIN)
async def revert(call: HostCall, args: RevertArgs) -> SkillView:
    """A new version equal to ``version``."""
    return skill_view(await call.host.skills.revert(call.member, args.name, args.version))


@routes.route("skills-v1/download", args=SkillDownloadArgs, least_role=Role.MEMBER)
async def download(call: HostCall, args: SkillDownloadArgs) -> SkillDownload:
    """A chunk of the skill's ``.zip`` (one folder named after it); ask again from
    ``offset + len`` until ``eof``. A version's archive is the same bytes each time."""
    data = await call.host.skills.export_archive(call.member.team_id, args.name, args.version)
    chunk = data[args.offset : args.offset + UPLOAD_CHUNK_BYTES]
    return SkillDownload(
        file_name=f"{args.name}.zip",
        data=base64.b64encode(chunk).decode(),
        offset=args.offset,
        size=len(data),
        eof=args.offset + len(chunk) >= len(data),
    )


@routes.route("skills-v1/upload_start", args=SkillUploadStart, least_role=Role.ADMIN)
async def upload_start(call: HostCall, args: SkillUploadStart) -> SkillUploadStarted:
    """Begin sending a ``.zip`` of ``size`` bytes."""
    upload = call.host.skills.start_upload(call.member, args.size)
    return SkillUploadStarted(upload_id=upload.id, chunk_bytes=UPLOAD_CHUNK_BYTES)


@routes.route("skills-v1/upload_chunk", args=SkillUploadChunk, least_role=Role.ADMIN)
async def upload_chunk(call: HostCall, args: SkillUploadChunk) -> SkillUploadProgress:
    received = call.host.skills.upload_chunk(call.member, args.upload_id, args.offset, args.data)
    return SkillUploadProgress(received=received)


@routes.route("skills-v1/upload_finish", args=FinishUpload, least_role=Role.ADMIN)
async def upload_finish(call: HostCall, args: FinishUpload) -> SkillView:
    """The archive, checked whole before anything is written, becomes a skill (or, with
    ``replace``, a new version of the skill of its name)."""
    skill = await call.host.skills.finish_upload(call.member, args.upload_id, replace=args.replace)
    return skill_view(skill)


@routes.route("skills-v1/save_draft", args=SkillRef, least_role=Role.ADMIN)
async def save_draft(call: HostCall, args: SkillRef) -> SkillView:
    """The reviewed draft is saved: agents that have it list it from the next turn."""
    return skill_view(await call.host.skills.save_draft(call.member, args.name))


@routes.route("skills-v1/discard_draft", args=SkillRef, least_role=Role.ADMIN)
async def discard_draft(call: HostCall, args: SkillRef) -> SkillDone:
    await call.host.skills.discard_draft(call.member, args.name)
    return SkillDone(done=True)


@routes.route("skills-v1/enable", args=EnableArgs, least_role=Role.ADMIN)
async def enable(call: HostCall, args: EnableArgs) -> SkillDone:
    """Give an agent a skill, or take it away."""
    await call.host.skills.enable(call.member, args.agent_id, args.name, enabled=args.enabled)
    return SkillDone(done=True)


@routes.route("skills-v1/agent_skills", args=SkillsOfAgent, least_role=Role.MEMBER)
async def agent_skills(call: HostCall, args: SkillsOfAgent) -> AgentSkills:
    """The saved skills an agent has: what its system prompt lists."""
    found = await call.host.skills.skills_of_agent(call.member.team_id, args.agent_id)
    return AgentSkills(
        agent_id=args.agent_id,
        skills=[EnabledView(name=s.name, description=s.description) for s in found],
    )
