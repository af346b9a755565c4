"""Agent templates: an agent as one portable file (``.crewhost-agent.zip``) that any team on
any host can import, and that updates an imported agent later.

The file holds ``manifest.json`` (format, version, each file's SHA-256 and a content hash
over them all), ``agent.json`` (model choice, tool and approval settings, the MCP servers
it uses by name, its skills by name, its routines), ``instructions.md``, the enabled
skills' folders under ``skills/<name>/`` in the Agent Skills format, and only when the
exporter ticks them ``memories.json`` (the team's memories of the agent, never a member's
private ones) and ``workspace/…`` (the agent's workspace files).

Never in it: provider keys, vault items, tokens, MCP environment values or headers,
webhook secrets, the accounts of routine audiences and approvers. Every text file is
scanned before it leaves (``secret_scan``): key-like text refuses the export, naming the
file and line. An imported file is checked whole (``zip_archive``'s checks, the manifest's
hashes, the same scan) before anything is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from server.common.clock import Clock
from server.common.errors import InvalidArgument, NotFound
from server.common.protocol.ids import ProviderId
from server.common.wire import holds_nul, no_control_characters
from server.host.agents.mcp_servers import McpServerService, McpServerView
from server.host.agents.permissions import known_families
from server.host.agents.routine_schedules import Schedule, ScheduleKind, schedule_of
from server.host.agents.routines import RoutineService, RoutineSpec
from server.host.agents.secret_scan import refuse_secrets
from server.host.services.agents import AgentService
from server.host.services.memories import MemoryService, normalize_site
from server.host.services.providers import ProviderService, ProviderStatus
from server.host.services.skill_format import MAX_SKILL_FILES, check_files
from server.host.services.skills import SkillService
from server.host.services.workspace import Member, WorkspaceService
from server.host.services.zip_archive import ArchiveRefused, ZipLimits, read_zip, write_zip
from server.host.storage.agents import Agent
from server.host.storage.routines import Routine
from server.host.workspace.paths import workspace_parts
from server.host.workspace.workspaces import WorkspaceRef

log = logging.getLogger(__name__)

FORMAT: Literal["crewhost-agent"] = "crewhost-agent"
FORMAT_VERSION = 1
FILE_SUFFIX = ".crewhost-agent.zip"
MANIFEST = "manifest.json"
AGENT_FILE = "agent.json"
INSTRUCTIONS_FILE = "instructions.md"
MEMORIES_FILE = "memories.json"
SKILLS_FOLDER = "skills/"
WORKSPACE_FOLDER = "workspace/"
MAX_TEMPLATE_BYTES = 32 * 1024 * 1024
LIMITS = ZipLimits(
    archive_bytes=MAX_TEMPLATE_BYTES,
    files=2_000,
    file_bytes=8 * 1024 * 1024,
    total_bytes=64 * 1024 * 1024,
    max_path_chars=400,
    what="an agent template",
)
MAX_TRANSFERS_PER_MEMBER = 4
TRANSFER_SECONDS = 600.0
TRANSFER_CHUNK_BYTES = 128 * 1024
MAX_DIFF_LINES = 400
# As an agent's instructions may be (``agents-v1``).
MAX_INSTRUCTIONS_CHARS = 20_000

SkillPolicy = Literal["keep", "replace"]


class TemplateRefused(ArchiveRefused):
    """An agent template's ``.zip`` was refused before anything was written."""

    code = "agentTemplateRefused"


def _invalid(message: str) -> InvalidArgument:
    return InvalidArgument(message, code="agentTemplateInvalid")


class _Model(BaseModel):
    """What a template file holds, read as strictly as what a client sends: no unknown
    field, no number that is no number, no NUL in any text (PostgreSQL cannot store one)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        allow_inf_nan=False,
    )

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: object) -> object:
        if holds_nul(value):
            raise ValueError("a NUL character is not allowed")
        return value


def _site(value: str | None) -> str | None:
    """A memory's site as the ``remember`` tool keeps it (a host), or None."""
    if value is None:
        return None
    try:
        return normalize_site(value)
    except InvalidArgument as exc:
        raise ValueError(exc.message) from None


class TemplateSchedule(_Model):
    """A routine's schedule, within the bounds ``routines-v1`` keeps."""

    kind: ScheduleKind
    cron: Annotated[str, Field(max_length=200)] | None = None
    time_zone: Annotated[str, Field(max_length=64)] | None = None
    every_seconds: Annotated[int, Field(ge=0, le=366 * 86_400)] | None = None
    at: Annotated[float, Field(ge=0, le=1e11)] | None = None


class TemplateRoutine(_Model):
    name: Name
    message: Annotated[str, Field(max_length=20_000)]
    schedule: TemplateSchedule
    thread_policy: Literal["new", "continue"] = "new"
    approval_seconds: Annotated[int, Field(ge=60, le=7 * 86_400)] = 86_400
    overlap: Literal["skip", "queue"] = "skip"
    missed: Literal["once", "skip"] = "once"
    enabled: bool = True


class TemplateMcpServer(_Model):
    name: Name
    transport: str
    unasked_tools: list[str] = Field(default_factory=list, max_length=500)


class TemplateProvider(_Model):
    id: ProviderId
    kind: str
    name: str


Name = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(no_control_characters)]


class AgentDocument(_Model):
    """``agent.json``: everything of the agent but its instructions and files."""

    name: Name
    provider: TemplateProvider
    model: (
        Annotated[str, Field(min_length=1, max_length=200), AfterValidator(no_control_characters)]
        | None
    )
    permissions: Annotated[
        dict[str, Literal["ask", "auto-approve"]], AfterValidator(known_families)
    ]
    max_tool_calls: Annotated[int, Field(ge=1, le=100)] | None
    skills: list[str] = Field(default_factory=list, max_length=200)
    mcp_servers: list[TemplateMcpServer] = Field(default_factory=list, max_length=100)
    routines: list[TemplateRoutine] = Field(default_factory=list, max_length=100)

    @model_validator(mode="after")
    def _names_once(self) -> AgentDocument:
        # An update finds the agent's routines and servers by name: each name once.
        for kind, names in (
            ("routine", [r.name for r in self.routines]),
            ("MCP server", [m.name for m in self.mcp_servers]),
        ):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"two {kind}s are named {twice[0]!r}")
        return self


class TemplateMemory(_Model):
    text: Annotated[str, Field(min_length=1, max_length=20_000)]
    site: Annotated[str | None, Field(max_length=300), AfterValidator(_site)] = None
    pinned: bool = False


class Manifest(_Model):
    format: Literal["crewhost-agent"]
    format_version: int
    agent_name: str
    exported_at: float
    includes: dict[str, bool]
    files: dict[str, str]
    content_hash: str


@dataclass(frozen=True, slots=True)
class Template:
    """A template read and checked whole."""

    manifest: Manifest
    agent: AgentDocument
    instructions: str
    skills: dict[str, dict[str, bytes]]
    memories: list[TemplateMemory]
    workspace: dict[str, bytes]


@dataclass(frozen=True, slots=True)
class SkillNeed:
    name: str
    # new (the team has none of that name), same (the team's newest is these files) or
    # differs (the team's is other files: kept, or replaced with a new version).
    status: str


@dataclass(frozen=True, slots=True)
class McpNeed:
    name: str
    transport: str
    # The team's server of that name, suggested for the mapping; None when it has none.
    match: str | None


@dataclass(frozen=True, slots=True)
class Preview:
    """What a template brings and what it needs of the importing team."""

    template: Template
    providers: list[ProviderStatus]
    provider_match: str | None
    model_available: bool
    skills: list[SkillNeed]
    mcp_servers: list[McpNeed]
    conflicts: list[str]


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between an agent and a newer template of it."""

    what: str
    before: str
    after: str
    diff: str = ""


@dataclass(frozen=True, slots=True)
class ImportChoices:
    """What the admin chose for a template's needs."""

    provider: str
    model: str | None = None
    keep_model: bool = True
    mcp_servers: Mapping[str, str | None] = field(default_factory=dict)
    skills: SkillPolicy = "keep"
    name: str | None = None


@dataclass(eq=False)
class Transfer:
    """An upload or an export of one member, held in memory until used or expired."""

    id: str
    member: Member
    size: int
    expires_at: float
    data: bytearray = field(default_factory=bytearray)
    file_name: str = ""
    # An upload once read and checked (preview, then import or update, read it once).
    template: Template | None = None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_hash(hashes: Mapping[str, str]) -> str:
    """One hash over every file: each path and its SHA-256, in path order."""
    joined = "".join(f"{path}\0{hashes[path]}\n" for path in sorted(hashes))
    return _sha(joined.encode())


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_template(
    agent: AgentDocument,
    instructions: str,
    skills: Mapping[str, Mapping[str, bytes]],
    *,
    memories: list[TemplateMemory] | None,
    workspace: Mapping[str, bytes] | None,
    exported_at: float,
) -> bytes:
    """The template's bytes; refused (``agentTemplateSecretFound``) when any text holds
    something key-like."""
    files: dict[str, bytes] = {
        AGENT_FILE: _json(agent.model_dump(by_alias=True, mode="json")),
        INSTRUCTIONS_FILE: instructions.encode(),
    }
    for name, folder in skills.items():
        for path, data in folder.items():
            files[f"{SKILLS_FOLDER}{name}/{path}"] = data
    if memories is not None:
        files[MEMORIES_FILE] = _json([m.model_dump(by_alias=True) for m in memories])
    for path, data in (workspace or {}).items():
        files[WORKSPACE_FOLDER + path] = data
    refuse_secrets(files.items())
    hashes = {path: _sha(data) for path, data in files.items()}
    manifest = Manifest(
        format=FORMAT,
        format_version=FORMAT_VERSION,
        agent_name=agent.name,
        exported_at=exported_at,
        includes={"memories": memories is not None, "workspace": workspace is not None},
        files=hashes,
        content_hash=content_hash(hashes),
    )
    files[MANIFEST] = _json(manifest.model_dump(by_alias=True))
    total = sum(len(d) for d in files.values())
    if len(files) > LIMITS.files or total > LIMITS.total_bytes:
        raise InvalidArgument(
            f"the template would hold {len(files)} files of {total} bytes; at most "
            f"{LIMITS.files} files of {LIMITS.total_bytes} bytes (leave the workspace out?)",
            code="agentTemplateTooLarge",
        )
    data = write_zip(files)
    if len(data) > LIMITS.archive_bytes:
        raise InvalidArgument(
            f"the template would be {len(data)} bytes; at most {LIMITS.archive_bytes}",
            code="agentTemplateTooLarge",
        )
    return data


def _parse(model: type[BaseModel], data: bytes, path: str) -> object:
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise _invalid(f"{path}: {where or 'the file'}: {first['msg']}") from exc


def read_template(data: bytes) -> Template:
    """A template checked whole: the zip's safety checks, the manifest (format, version,
    every file's hash and nothing unlisted), the agent's settings, each skill's folder,
    and no key-like text anywhere."""
    files = read_zip(data, LIMITS, TemplateRefused)
    raw = files.pop(MANIFEST, None)
    if raw is None:
        raise _invalid(f"the file has no {MANIFEST}: it is not an agent template")
    try:
        head = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # nested past the parser's depth too
        raise _invalid(f"{MANIFEST} is not JSON") from exc
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise _invalid(f"{MANIFEST} does not name the format {FORMAT!r}")
    if head.get("formatVersion") != FORMAT_VERSION:
        raise _invalid(
            f"format version {head.get('formatVersion')!r} is not one this host reads "
            f"({FORMAT_VERSION}); update the host"
        )
    manifest = _parse(Manifest, raw, MANIFEST)
    assert isinstance(manifest, Manifest)
    hashes = {path: _sha(content) for path, content in files.items()}
    if hashes != manifest.files or content_hash(hashes) != manifest.content_hash:
        changed = sorted(set(hashes.items()) ^ set(manifest.files.items()))
        named = changed[0][0] if changed else MANIFEST
        raise _invalid(f"the content hash does not match ({named!r} differs): the file changed")
    refuse_secrets(files.items())
    for needed in (AGENT_FILE, INSTRUCTIONS_FILE):
        if needed not in files:
            raise _invalid(f"the template has no {needed}")
    agent = _parse(AgentDocument, files[AGENT_FILE], AGENT_FILE)
    assert isinstance(agent, AgentDocument)
    try:
        instructions = files[INSTRUCTIONS_FILE].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(f"{INSTRUCTIONS_FILE} is not UTF-8 text") from exc
    if len(instructions) > MAX_INSTRUCTIONS_CHARS:
        raise _invalid(f"{INSTRUCTIONS_FILE} is longer than {MAX_INSTRUCTIONS_CHARS} characters")
    if "\x00" in instructions:
        raise _invalid(f"{INSTRUCTIONS_FILE} holds a NUL character")
    skills: dict[str, dict[str, bytes]] = {}
    workspace: dict[str, bytes] = {}
    memories: list[TemplateMemory] = []
    for path, content in files.items():
        if path.startswith(SKILLS_FOLDER):
            name, _, rest = path[len(SKILLS_FOLDER) :].partition("/")
            skills.setdefault(name, {})[rest] = content
        elif path.startswith(WORKSPACE_FOLDER):
            inside = path[len(WORKSPACE_FOLDER) :]
            # Checked before anything is written, as the workspace will check it.
            workspace_parts(inside)
            workspace[inside] = content
        elif path == MEMORIES_FILE:
            memories = _memories(content)
        elif path not in (AGENT_FILE, INSTRUCTIONS_FILE):
            raise _invalid(f"{path!r} has no place in an agent template")
    if sorted(skills) != sorted(agent.skills):
        raise _invalid("agent.json's skills and the skills/ folders differ")
    for name, folder in skills.items():
        if len(folder) > MAX_SKILL_FILES or check_files(folder).front.name != name:
            raise _invalid(f"skills/{name}/ is not the folder of a skill named {name!r}")
    return Template(manifest, agent, instructions, skills, memories, workspace)


def _memories(content: bytes) -> list[TemplateMemory]:
    try:
        items = json.loads(content)
        if not isinstance(items, list):
            raise ValueError("not a list")
        return [TemplateMemory.model_validate(item) for item in items]
    except (ValueError, RecursionError, ValidationError) as exc:
        raise _invalid(f"{MEMORIES_FILE} is not a list of memories") from exc


class AgentTemplateService:
    """Export, preview, import and update agents as templates; every call names the team."""

    def __init__(
        self,
        clock: Clock,
        agents: AgentService,
        providers: ProviderService,
        skills: SkillService,
        routines: RoutineService,
        mcp_servers: McpServerService,
        memories: MemoryService,
        workspace: WorkspaceService,
    ) -> None:
        self._clock = clock
        self._agents = agents
        self._providers = providers
        self._skills = skills
        self._routines = routines
        self._mcp = mcp_servers
        self._memories = memories
        self._workspace = workspace
        self._transfers: dict[str, Transfer] = {}

    # -- export ---------------------------------------------------------------------------

    async def export(
        self, member: Member, agent_id: str, *, memories: bool, workspace: bool
    ) -> Transfer:
        """The agent as a template, kept for the member to download in chunks."""
        data = await self.export_bytes(member, agent_id, memories=memories, workspace=workspace)
        agent = await self._agents.get_agent(member.team_id, agent_id)
        transfer = self._new_transfer(member, len(data))
        transfer.data += data
        transfer.file_name = _file_name(agent.name)
        return transfer

    async def export_bytes(
        self, member: Member, agent_id: str, *, memories: bool, workspace: bool
    ) -> bytes:
        team_id = member.team_id
        agent = await self._agents.get_agent(team_id, agent_id)
        skills = {
            s.name: (await self._skills.get_skill(team_id, s.name)).files
            for s in await self._skills.agent_skills(team_id, agent_id)
        }
        document = AgentDocument(
            name=agent.name,
            provider=await self._provider_of(agent),
            model=agent.model,
            permissions=agent.permissions,  # type: ignore[arg-type]
            max_tool_calls=agent.max_tool_calls,
            skills=sorted(skills),
            mcp_servers=await self._mcp_of(team_id, agent_id),
            routines=[
                _template_routine(r) for r in await self._routines.list_routines(member, agent_id)
            ],
        )
        # Scanning and compressing take a while for a large workspace: off the event loop.
        return await asyncio.to_thread(
            write_template,
            document,
            agent.instructions,
            skills,
            memories=await self._memories_of(team_id, agent_id) if memories else None,
            workspace=await self._workspace_of(team_id, agent_id) if workspace else None,
            exported_at=self._clock.now(),
        )

    def download(self, member: Member, transfer_id: str, offset: int) -> tuple[Transfer, bytes]:
        transfer = self._transfer(member, transfer_id)
        return transfer, bytes(transfer.data[offset : offset + TRANSFER_CHUNK_BYTES])

    # -- upload ---------------------------------------------------------------------------

    def start_upload(self, member: Member, size: int) -> Transfer:
        if size <= 0 or size > MAX_TEMPLATE_BYTES:
            raise TemplateRefused("tooLarge", f"a template is 1 to {MAX_TEMPLATE_BYTES} bytes")
        return self._new_transfer(member, size)

    def upload_chunk(self, member: Member, upload_id: str, offset: int, data: bytes) -> int:
        transfer = self._transfer(member, upload_id)
        if offset != len(transfer.data) or offset + len(data) > transfer.size:
            raise InvalidArgument(
                f"the next chunk starts at byte {len(transfer.data)} and ends by {transfer.size}",
                code="agentTemplateUploadInvalid",
            )
        transfer.data += data
        transfer.expires_at = self._clock.now() + TRANSFER_SECONDS
        return len(transfer.data)

    async def uploaded(self, member: Member, upload_id: str) -> Template:
        """The uploaded template, read and checked off the event loop (it stays for import
        or update)."""
        transfer = self._transfer(member, upload_id)
        if len(transfer.data) != transfer.size:
            raise InvalidArgument(
                f"{len(transfer.data)} of {transfer.size} bytes arrived",
                code="agentTemplateUploadInvalid",
            )
        if transfer.template is None:
            transfer.template = await asyncio.to_thread(read_template, bytes(transfer.data))
        return transfer.template

    def finish(self, member: Member, upload_id: str) -> None:
        self._transfers.pop(upload_id, None)

    @contextlib.asynccontextmanager
    async def claimed(self, member: Member, upload_id: str) -> AsyncIterator[Template]:
        """The uploaded template for one import or update: the upload is taken for it, so
        one sent twice at once makes one agent (the other finds no upload), and it is gone
        once used; a use that failed puts it back, to be tried again."""
        template = await self.uploaded(member, upload_id)
        transfer = self._transfers.pop(upload_id, None)
        if transfer is None:
            raise NotFound(
                "no such template transfer; it is being used or has expired",
                code="agentTemplateTransferNotFound",
            )
        try:
            yield template
        except BaseException:
            self._transfers[upload_id] = transfer
            raise

    # -- preview, import, update ----------------------------------------------------------

    async def preview(self, member: Member, template: Template) -> Preview:
        """What the template brings and needs, and what clashes with the team's things."""
        team_id = member.team_id
        wanted = template.agent.provider
        providers = await self._providers.list_providers(team_id)
        match = next((p for p in providers if p.id == wanted.id), None) or next(
            (p for p in providers if p.kind == wanted.kind), None
        )
        model = template.agent.model
        servers = {s.name: s.id for s in await self._mcp.list_servers(team_id)}
        skills = [await self._skill_need(team_id, n, f) for n, f in template.skills.items()]
        conflicts = []
        if any(a.name == template.agent.name for a in await self._agents.list_agents(team_id)):
            conflicts.append(f"the team has an agent named {template.agent.name!r} already")
        for need in skills:
            if need.status == "differs":
                conflicts.append(f"the team's skill {need.name!r} differs from the template's")
        missing = [s.name for s in template.agent.mcp_servers if s.name not in servers]
        for name in missing:
            conflicts.append(f"the team has no MCP server named {name!r}")
        return Preview(
            template=template,
            providers=providers,
            provider_match=None if match is None else match.id,
            model_available=match is not None
            and (model is None or not match.models or model in match.models),
            skills=skills,
            mcp_servers=[
                McpNeed(s.name, s.transport, servers.get(s.name))
                for s in template.agent.mcp_servers
            ],
            conflicts=conflicts,
        )

    async def import_agent(
        self, member: Member, template: Template, choices: ImportChoices
    ) -> Agent:
        """A new agent of the team from the template, with the admin's mapping: whole, or
        (a limit reached half-way, say) nothing of it stays."""
        await self._check_choices(member, template, choices)
        document = template.agent
        brought = BroughtSkills()
        await self._bring_skills(member, template, choices.skills, brought)
        try:
            agent = await self._agents.create_agent(
                member.team_id,
                name=choices.name or document.name,
                instructions=template.instructions,
                provider=choices.provider,
                model=document.model if choices.keep_model else choices.model,
                permissions=dict(document.permissions),
                max_tool_calls=document.max_tool_calls,
            )
            try:
                await self._apply(member, agent.id, template, choices, fresh=True)
            except BaseException:
                # Its routines, memories, workspace and settings go with it.
                await self._agents.delete_agent(member.team_id, agent.id)
                raise
        except BaseException:
            await self._undo_skills(member, brought)
            raise
        return agent

    async def update_preview(
        self, member: Member, agent_id: str, template: Template
    ) -> list[Change]:
        """How the agent would change: its settings, instructions (a diff), skills, MCP
        servers and routines by name; memories and threads stay."""
        team_id = member.team_id
        agent = await self._agents.get_agent(team_id, agent_id)
        document = template.agent
        changes: list[Change] = []

        def compare(what: str, before: object, after: object) -> None:
            if before != after:
                changes.append(Change(what, _show(before), _show(after)))

        compare("model", agent.model, document.model)
        compare("permissions", agent.permissions, dict(document.permissions))
        compare("maxToolCalls", agent.max_tool_calls, document.max_tool_calls)
        if agent.instructions != template.instructions:
            changes.append(
                Change(
                    "instructions",
                    f"{len(agent.instructions)} characters",
                    f"{len(template.instructions)} characters",
                    _diff(agent.instructions, template.instructions),
                )
            )
        have = {s.name for s in await self._skills.agent_skills(team_id, agent_id)}
        compare("skills", sorted(have), sorted(template.skills))
        for name, folder in sorted(template.skills.items()):
            need = await self._skill_need(team_id, name, folder)
            if need.status == "differs":
                changes.append(Change(f"skill {name}", "the team's version", "the template's"))
        servers = sorted(s.name for s in await self._mcp.list_servers(team_id) if _has(s, agent_id))
        compare("mcpServers", servers, sorted(s.name for s in document.mcp_servers))
        routines = {
            r.name: _template_routine(r)
            for r in await self._routines.list_routines(member, agent_id)
        }
        for routine in document.routines:
            old = routines.get(routine.name)
            if old is None:
                changes.append(Change(f"routine {routine.name}", "none", "added"))
            elif old != routine:
                changes.append(Change(f"routine {routine.name}", "as it is", "changed"))
        if template.memories:
            changes.append(Change("memories", "kept", f"{len(template.memories)} added if new"))
        if template.workspace:
            changes.append(Change("workspace", "kept", f"{len(template.workspace)} files written"))
        return changes

    async def update_agent(
        self, member: Member, agent_id: str, template: Template, choices: ImportChoices
    ) -> Agent:
        """The agent updated from a newer template; its memories, threads and name stay."""
        await self._agents.get_agent(member.team_id, agent_id)
        await self._check_choices(member, template, choices)
        document = template.agent
        before = await self._state_of(member, agent_id)
        brought = BroughtSkills()
        try:
            await self._bring_skills(member, template, choices.skills, brought)
            agent = await self._agents.update_agent(
                member.team_id,
                agent_id,
                instructions=template.instructions,
                provider=choices.provider,
                model=document.model if choices.keep_model else choices.model,
                clear_model=(document.model if choices.keep_model else choices.model) is None,
                permissions=dict(document.permissions),
                max_tool_calls=document.max_tool_calls,
                clear_max_tool_calls=document.max_tool_calls is None,
            )
            await self._apply(member, agent_id, template, choices, fresh=False)
        except BaseException:
            # A limit reached half-way (the memory cap, the workspace quota): the agent is
            # put back as it was, so an update lands whole or not at all.
            try:
                await self._restore(member, before, brought)
            except Exception:
                log.exception("an agent could not be put back after a failed update")
            raise
        return agent

    # -- inside ---------------------------------------------------------------------------

    async def _check_choices(
        self, member: Member, template: Template, choices: ImportChoices
    ) -> None:
        """Refuse, before anything is written, a provider or MCP server the team lacks."""
        await self._providers.require_provider(member.team_id, choices.provider)
        servers = {s.id for s in await self._mcp.list_servers(member.team_id)}
        names = {s.name for s in template.agent.mcp_servers}
        for name, server_id in choices.mcp_servers.items():
            if name not in names:
                raise _invalid(f"the template uses no MCP server named {name!r}")
            if server_id is not None and server_id not in servers:
                raise NotFound("No such MCP server in this team", code="mcpServerNotFound")
        for routine in template.agent.routines:
            schedule_of(routine.schedule, self._clock.now())

    async def _bring_skills(
        self, member: Member, template: Template, policy: SkillPolicy, brought: BroughtSkills
    ) -> None:
        """The template's skills the team lacks made, or replaced by the policy; each noted
        in ``brought`` as it is done (undone together if the bringing fails)."""
        try:
            for name, folder in sorted(template.skills.items()):
                need = await self._skill_need(member.team_id, name, folder)
                if need.status == "new":
                    await self._skills.create(member, folder)
                    brought.created.append(name)
                elif need.status == "differs" and policy == "replace":
                    version = (await self._skills.get_skill(member.team_id, name)).version
                    await self._skills.update(member, name, folder, change="uploaded")
                    brought.replaced[name] = version
        except BaseException:
            await self._undo_skills(member, brought)
            raise

    async def _undo_skills(self, member: Member, brought: BroughtSkills) -> None:
        """Skills an import made removed, and those it replaced back at their version
        before, when it does not land."""
        for name in brought.created:
            await self._skills.delete(member, name)
        for name, version in brought.replaced.items():
            await self._skills.revert(member, name, version)
        brought.created.clear()
        brought.replaced.clear()

    async def _state_of(self, member: Member, agent_id: str) -> AgentState:
        """What an update may change of the agent, to put back if it fails."""
        team_id = member.team_id
        return AgentState(
            agent=await self._agents.get_agent(team_id, agent_id),
            skills=frozenset(s.name for s in await self._skills.agent_skills(team_id, agent_id)),
            mcp={
                server.id: list(access.unasked_tools)
                for server in await self._mcp.list_servers(team_id)
                for access in server.agents
                if access.agent_id == agent_id
            },
            routines=await self._routines.list_routines(member, agent_id),
            memories=frozenset(m.id for m in await self._memories.list_memories(team_id, agent_id)),
        )

    async def _restore(self, member: Member, before: AgentState, brought: BroughtSkills) -> None:
        """The agent as ``before`` says, after an update that failed half-way."""
        team_id, agent = member.team_id, before.agent
        await self._agents.update_agent(
            team_id,
            agent.id,
            instructions=agent.instructions,
            provider=agent.provider,
            model=agent.model,
            clear_model=agent.model is None,
            permissions=dict(agent.permissions),
            max_tool_calls=agent.max_tool_calls,
            clear_max_tool_calls=agent.max_tool_calls is None,
        )
        await self._undo_skills(member, brought)
        now = await self._state_of(member, agent.id)
        for name in sorted(now.skills ^ before.skills):
            await self._skills.enable(member, agent.id, name, enabled=name in before.skills)
        for server_id in now.mcp.keys() | before.mcp.keys():
            if now.mcp.get(server_id) != before.mcp.get(server_id):
                await self._mcp.set_agent(
                    team_id,
                    server_id,
                    agent.id,
                    enabled=server_id in before.mcp,
                    unasked_tools=before.mcp.get(server_id, []),
                )
        kept = {r.id: r for r in before.routines}
        for routine in now.routines:
            if routine.id not in kept:
                await self._routines.delete_routine(member, routine.id)
            elif routine != kept[routine.id]:
                await self._routines.update_routine(member, routine.id, _spec_of(kept[routine.id]))
        for memory_id in now.memories - before.memories:
            await self._memories.delete_memory(member, agent.id, memory_id)

    async def _apply(
        self,
        member: Member,
        agent_id: str,
        template: Template,
        choices: ImportChoices,
        *,
        fresh: bool,
    ) -> None:
        """Skills, MCP servers, routines, memories and workspace files of the template."""
        team_id = member.team_id
        have = {s.name for s in await self._skills.agent_skills(team_id, agent_id)}
        for name in sorted(have | set(template.skills)):
            wanted = name in template.skills
            if wanted != (name in have):
                await self._skills.enable(member, agent_id, name, enabled=wanted)
        # The file's unaskedTools say what the source team allowed: this team's admins
        # choose anew, so a new link asks for every call and an existing one keeps its own.
        allowed: dict[str, list[str]] = {}
        if not fresh:
            for server in await self._mcp.list_servers(team_id):
                for access in server.agents:
                    if access.agent_id == agent_id:
                        allowed[server.id] = list(access.unasked_tools)
                if _has(server, agent_id) and server.id not in choices.mcp_servers.values():
                    await self._mcp.set_agent(
                        team_id, server.id, agent_id, enabled=False, unasked_tools=[]
                    )
        for server_id in choices.mcp_servers.values():
            if server_id is not None:
                await self._mcp.set_agent(
                    team_id,
                    server_id,
                    agent_id,
                    enabled=True,
                    unasked_tools=allowed.get(server_id, []),
                )
        existing = {} if fresh else await self._routines_by_name(member, agent_id)
        now = self._clock.now()
        for routine in template.agent.routines:
            spec = _spec(routine, now)
            if routine.name in existing:
                # Accounts do not travel: who sees and approves its runs stays the team's.
                mine = existing[routine.name]
                spec = replace(
                    spec,
                    audience=mine.audience,  # type: ignore[arg-type]
                    audience_members=mine.audience_members,
                    approvers=mine.approvers,
                )
                await self._routines.update_routine(member, mine.id, spec)
            else:
                await self._routines.create_routine(member, agent_id, spec)
        known = {m.text for m in await self._memories.list_memories(team_id, agent_id)}
        for memory in template.memories:
            if memory.text in known:
                continue
            kept = await self._memories.add_memory(team_id, agent_id, memory.text, memory.site)
            if memory.pinned:
                await self._memories.pin_memory(member, agent_id, kept.id, True)
        # Last, and all at once: the quotas refuse the files together, before any is written.
        ref = WorkspaceRef(team_id, agent_id)
        await self._workspace.write_all(ref, sorted(template.workspace.items()))

    async def _routines_by_name(self, member: Member, agent_id: str) -> dict[str, Routine]:
        return {r.name: r for r in await self._routines.list_routines(member, agent_id)}

    async def _skill_need(self, team_id: str, name: str, folder: Mapping[str, bytes]) -> SkillNeed:
        found = {s.name for s, _ in await self._skills.list_skills(team_id)}
        if name not in found:
            return SkillNeed(name, "new")
        theirs = (await self._skills.get_skill(team_id, name)).files
        return SkillNeed(name, "same" if theirs == dict(folder) else "differs")

    async def _provider_of(self, agent: Agent) -> TemplateProvider:
        for status in await self._providers.list_providers(agent.team_id):
            if status.id == agent.provider:
                # A custom provider's id is this team's; its kind and name travel.
                return TemplateProvider(id=status.id, kind=status.kind, name=status.name)
        return TemplateProvider(id=agent.provider, kind=agent.provider, name=agent.provider)

    async def _mcp_of(self, team_id: str, agent_id: str) -> list[TemplateMcpServer]:
        servers = []
        for server in await self._mcp.list_servers(team_id):
            for access in server.agents:
                if access.agent_id == agent_id:
                    servers.append(
                        TemplateMcpServer(
                            name=server.name,
                            transport=server.transport,
                            unasked_tools=list(access.unasked_tools),
                        )
                    )
        return servers

    async def _memories_of(self, team_id: str, agent_id: str) -> list[TemplateMemory]:
        """The team's memories of the agent (a member's private ones stay), oldest first."""
        found = await self._memories.list_memories(team_id, agent_id)
        return [
            TemplateMemory(text=m.text, site=m.site, pinned=m.pinned)
            for m in reversed(found)
            if m.member_id is None
        ]

    async def _workspace_of(self, team_id: str, agent_id: str) -> dict[str, bytes]:
        ref = WorkspaceRef(team_id, agent_id)
        files: dict[str, bytes] = {}
        total = 0
        folders = [""]
        while folders:
            folder = folders.pop()
            for entry in await self._workspace.list_folder(ref, folder):
                path = f"{folder}/{entry.name}" if folder else entry.name
                if entry.kind == "folder":
                    folders.append(path)
                    continue
                if len(files) >= LIMITS.files:
                    raise InvalidArgument(
                        f"the workspace holds more than {LIMITS.files} files",
                        code="agentTemplateTooLarge",
                    )
                files[path] = await self._workspace.read(ref, path)
                total += len(files[path])
                if total > LIMITS.total_bytes:
                    raise InvalidArgument(
                        f"the workspace holds more than {LIMITS.total_bytes} bytes",
                        code="agentTemplateTooLarge",
                    )
        return files

    def _new_transfer(self, member: Member, size: int) -> Transfer:
        """A new upload or download; past ``MAX_TRANSFERS_PER_MEMBER`` the member's oldest
        is dropped (an export never fetched, a preview never imported)."""
        self._drop_expired()
        mine = [t for t in self._transfers.values() if t.member == member]
        for old in mine[: max(0, len(mine) - MAX_TRANSFERS_PER_MEMBER + 1)]:
            del self._transfers[old.id]
        transfer = Transfer(
            secrets.token_hex(16), member, size, self._clock.now() + TRANSFER_SECONDS
        )
        self._transfers[transfer.id] = transfer
        return transfer

    def _transfer(self, member: Member, transfer_id: str) -> Transfer:
        self._drop_expired()
        transfer = self._transfers.get(transfer_id)
        if transfer is None or transfer.member != member:
            raise NotFound(
                "no such template transfer; it may have expired",
                code="agentTemplateTransferNotFound",
            )
        return transfer

    def _drop_expired(self) -> None:
        now = self._clock.now()
        for transfer in [t for t in self._transfers.values() if t.expires_at <= now]:
            del self._transfers[transfer.id]


def _has(server: McpServerView, agent_id: str) -> bool:
    return any(a.agent_id == agent_id for a in server.agents)


def _file_name(name: str) -> str:
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in name.lower()).strip("-")
    return f"{stem or 'agent'}{FILE_SUFFIX}"


def _show(value: object) -> str:
    if value is None:
        return "default"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _diff(before: str, after: str) -> str:
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile="now",
            tofile="template",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... the diff goes on past {MAX_DIFF_LINES} lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class BroughtSkills:
    """The skills an import or update made (by name) and replaced (the version before)."""

    created: list[str] = field(default_factory=list)
    replaced: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentState:
    """What an update from a template may change of an agent."""

    agent: Agent
    skills: frozenset[str]
    # Server id to the tools the agent may call there unasked.
    mcp: dict[str, list[str]]
    routines: list[Routine]
    memories: frozenset[str]


def _spec_of(routine: Routine) -> RoutineSpec:
    """A routine's settings as they are, to set again."""
    return RoutineSpec(
        name=routine.name,
        message=routine.message,
        schedule=Schedule.from_json(routine.schedule),
        thread_policy=routine.thread_policy,  # type: ignore[arg-type]
        audience=routine.audience,  # type: ignore[arg-type]
        audience_members=tuple(routine.audience_members),
        approvers=tuple(routine.approvers),
        approval_seconds=routine.approval_seconds,
        overlap=routine.overlap,  # type: ignore[arg-type]
        missed=routine.missed,  # type: ignore[arg-type]
        enabled=routine.enabled,
    )


def _template_routine(routine: Routine) -> TemplateRoutine:
    """A routine as a template carries it: no accounts, no thread, no fire times."""
    schedule = Schedule.from_json(routine.schedule)
    return TemplateRoutine(
        name=routine.name,
        message=routine.message,
        schedule=TemplateSchedule(
            kind=schedule.kind,
            cron=schedule.cron,
            time_zone=schedule.time_zone,
            every_seconds=schedule.every_seconds,
            at=schedule.at,
        ),
        thread_policy=routine.thread_policy,  # type: ignore[arg-type]
        approval_seconds=routine.approval_seconds,
        overlap=routine.overlap,  # type: ignore[arg-type]
        missed=routine.missed,  # type: ignore[arg-type]
        enabled=routine.enabled,
    )


def _spec(routine: TemplateRoutine, now: float) -> RoutineSpec:
    """The routine for the importing team: its creator the importer, runs seen and approved
    by the importer until someone chooses others (accounts do not travel)."""
    schedule = schedule_of(routine.schedule, now)
    # A once-routine whose time has passed comes in turned off: it would never run.
    passed = schedule.kind == "once" and schedule.at is not None and schedule.at <= now
    return RoutineSpec(
        name=routine.name,
        message=routine.message,
        schedule=schedule,
        thread_policy=routine.thread_policy,
        approval_seconds=routine.approval_seconds,
        overlap=routine.overlap,
        missed=routine.missed,
        enabled=routine.enabled and not passed,
    )
