"""``agent-templates-v1``: an agent as one portable file (``.crewhost-agent.zip``), for owners
and admins: export it (then download it in chunks), upload one in chunks, preview what it
brings and needs (and, for an agent to update, what would change), import it as a new agent
or update an agent from it."""

from __future__ import annotations

import base64
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.ids import AgentId, McpServerId, ProviderId, UploadId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel
from server.host.agents.templates import (
    MAX_TEMPLATE_BYTES,
    TRANSFER_CHUNK_BYTES,
    ImportChoices,
    Preview,
)
from server.host.container import HostCall
from server.host.routes.agents import AgentName, ModelName
from server.host.routes.workspace import Chunk
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.agents import Agent

routes = HostRouteTable("agent-templates-v1")

ServerName = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class TemplateExportArgs(InboundModel):
    agent_id: AgentId
    include_memories: bool = Field(
        default=False, description="the team's memories of the agent (never private ones)"
    )
    include_workspace: bool = Field(default=False, description="the agent's workspace files")


class TemplateExportReady(WireModel):
    download_id: str
    file_name: str
    size: int
    chunk_bytes: int


class TemplateDownloadArgs(InboundModel):
    download_id: UploadId
    offset: WireInt = 0


class TemplateDownload(WireModel):
    file_name: str
    data: str = Field(description="base64 of the file's bytes from offset")
    offset: int
    size: int
    eof: bool


class TemplateUploadStart(InboundModel):
    size: Annotated[WireInt, Field(ge=1, le=MAX_TEMPLATE_BYTES)]


class TemplateUploadStarted(WireModel):
    upload_id: str
    chunk_bytes: int


class TemplateUploadChunk(InboundModel):
    upload_id: UploadId
    offset: WireInt
    data: Chunk


class TemplateUploadProgress(WireModel):
    received: int


class TemplatePreviewArgs(InboundModel):
    upload_id: UploadId
    agent_id: AgentId | None = Field(
        default=None, description="an agent to update: the answer's changes say what would change"
    )


class TemplateProviderNeed(WireModel):
    id: str
    kind: str
    name: str
    model: str | None
    match: str | None = Field(description="the team's provider suggested for it, if any")
    model_available: bool


class TemplateProviderChoice(WireModel):
    id: str
    name: str
    kind: str
    models: list[str]
    usable: bool


class TemplateSkillNeed(WireModel):
    name: str
    status: str = Field(description="new, same (the team's is these files) or differs")


class TemplateMcpNeed(WireModel):
    name: str
    transport: str
    match: str | None = Field(description="the team's MCP server of that name, if any")


class TemplateRoutineView(WireModel):
    name: str
    schedule: str = Field(description="its kind: cron, every or once")
    enabled: bool


class TemplateChange(WireModel):
    what: str
    before: str
    after: str
    diff: str = Field(description="a unified diff (instructions)")


class TemplatePreview(WireModel):
    name: str
    exported_at: float
    content_hash: str
    format_version: int
    instructions_chars: int
    permissions: dict[str, str]
    max_tool_calls: int | None
    provider: TemplateProviderNeed
    providers: list[TemplateProviderChoice] = Field(description="the team's providers to map to")
    mcp_servers: list[TemplateMcpNeed]
    skills: list[TemplateSkillNeed]
    routines: list[TemplateRoutineView]
    memories: int = Field(description="memories it brings (0 when not ticked at export)")
    workspace_files: int
    workspace_bytes: int
    conflicts: list[str]
    changes: list[TemplateChange] | None = Field(description="with agentId: what would change")


class TemplateMapping(InboundModel):
    upload_id: UploadId
    provider: ProviderId = Field(description="the team's provider the agent uses")
    model: ModelName | None = Field(
        default=None, description="left out: the template's model; null: the provider's default"
    )
    mcp_servers: dict[ServerName, McpServerId | None] = Field(
        default_factory=dict,
        max_length=100,
        description="the template's MCP server names mapped to the team's servers (null: none)",
    )
    skills: Literal["keep", "replace"] = Field(
        default="keep",
        description="a skill the team has with other files: keep the team's, or replace it",
    )


class ImportTemplate(TemplateMapping):
    name: AgentName | None = Field(default=None, description="left out: the template's name")


class UpdateFromTemplate(TemplateMapping):
    agent_id: AgentId


class TemplateImported(WireModel):
    agent_id: str
    name: str


def _choices(args: TemplateMapping, name: str | None = None) -> ImportChoices:
    return ImportChoices(
        provider=args.provider,
        model=args.model,
        keep_model="model" not in args.model_fields_set,
        mcp_servers=dict(args.mcp_servers),
        skills=args.skills,
        name=name,
    )


def _preview(found: Preview) -> TemplatePreview:
    template = found.template
    agent = template.agent
    return TemplatePreview(
        name=agent.name,
        exported_at=template.manifest.exported_at,
        content_hash=template.manifest.content_hash,
        format_version=template.manifest.format_version,
        instructions_chars=len(template.instructions),
        permissions=dict(agent.permissions),
        max_tool_calls=agent.max_tool_calls,
        provider=TemplateProviderNeed(
            id=agent.provider.id,
            kind=agent.provider.kind,
            name=agent.provider.name,
            model=agent.model,
            match=found.provider_match,
            model_available=found.model_available,
        ),
        providers=[
            TemplateProviderChoice(
                id=p.id, name=p.name, kind=p.kind, models=list(p.models), usable=p.usable
            )
            for p in found.providers
        ],
        mcp_servers=[
            TemplateMcpNeed(name=m.name, transport=m.transport, match=m.match)
            for m in found.mcp_servers
        ],
        skills=[TemplateSkillNeed(name=s.name, status=s.status) for s in found.skills],
        routines=[
            TemplateRoutineView(name=r.name, schedule=r.schedule.kind, enabled=r.enabled)
            for r in agent.routines
        ],
        memories=len(template.memories),
        workspace_files=len(template.workspace),
        workspace_bytes=sum(len(d) for d in template.workspace.values()),
        conflicts=found.conflicts,
        changes=None,
    )


def _imported(agent: Agent) -> TemplateImported:
    return TemplateImported(agent_id=agent.id, name=agent.name)


@routes.route("agent-templates-v1/export", args=TemplateExportArgs, least_role=Role.ADMIN)
async def export(call: HostCall, args: TemplateExportArgs) -> TemplateExportReady:
    """The agent as a template (refused when any text in it looks like a key), kept for
    ``download``."""
    ready = await call.host.agent_templates.export(
        call.member,
        args.agent_id,
        memories=args.include_memories,
        workspace=args.include_workspace,
    )
    return TemplateExportReady(
        download_id=ready.id,
        file_name=ready.file_name,
        size=ready.size,
        chunk_bytes=TRANSFER_CHUNK_BYTES,
    )


@routes.route("agent-templates-v1/download", args=TemplateDownloadArgs, least_role=Role.ADMIN)
async def download(call: HostCall, args: TemplateDownloadArgs) -> TemplateDownload:
    """A chunk of an exported template; ask again from ``offset + len`` until ``eof``."""
    ready, chunk = call.host.agent_templates.download(call.member, args.download_id, args.offset)
    eof = args.offset + len(chunk) >= ready.size
    if eof:
        call.host.agent_templates.finish(call.member, args.download_id)
    return TemplateDownload(
        file_name=ready.file_name,
        data=base64.b64encode(chunk).decode(),
        offset=args.offset,
        size=ready.size,
        eof=eof,
    )


@routes.route("agent-templates-v1/upload_start", args=TemplateUploadStart, least_role=Role.ADMIN)
async def upload_start(call: HostCall, args: TemplateUploadStart) -> TemplateUploadStarted:
    """Begin sending a template of ``size`` bytes."""
    upload = call.host.agent_templates.start_upload(call.member, args.size)
    return TemplateUploadStarted(upload_id=upload.id, chunk_bytes=TRANSFER_CHUNK_BYTES)


@routes.route("agent-templates-v1/upload_chunk", args=TemplateUploadChunk, least_role=Role.ADMIN)
async def upload_chunk(call: HostCall, args: TemplateUploadChunk) -> TemplateUploadProgress:
    templates = call.host.agent_templates
    return TemplateUploadProgress(
        received=templates.upload_chunk(call.member, args.upload_id, args.offset, args.data)
    )


@routes.route("agent-templates-v1/preview", args=TemplatePreviewArgs, least_role=Role.ADMIN)
async def preview(call: HostCall, args: TemplatePreviewArgs) -> TemplatePreview:
    """The uploaded template checked whole: what it brings, what it needs of the team, what
    clashes; with ``agentId``, what updating that agent would change."""
    templates = call.host.agent_templates
    template = await templates.uploaded(call.member, args.upload_id)
    view = _preview(await templates.preview(call.member, template))
    if args.agent_id is None:
        return view
    changes = await templates.update_preview(call.member, args.agent_id, template)
    return view.model_copy(
        update={
            "changes": [
                TemplateChange(what=c.what, before=c.before, after=c.after, diff=c.diff)
                for c in changes
            ]
        }
    )


@routes.route("agent-templates-v1/import", args=ImportTemplate, least_role=Role.ADMIN)
async def import_agent(call: HostCall, args: ImportTemplate) -> TemplateImported:
    """A new agent of the team from the uploaded template, with the chosen mapping."""
    templates = call.host.agent_templates
    async with templates.claimed(call.member, args.upload_id) as template:
        agent = await templates.import_agent(call.member, template, _choices(args, args.name))
    return _imported(agent)


@routes.route("agent-templates-v1/update", args=UpdateFromTemplate, least_role=Role.ADMIN)
async def update_agent(call: HostCall, args: UpdateFromTemplate) -> TemplateImported:
    """The agent updated from the uploaded (newer) template; its memories, threads and
    name stay."""
    templates = call.host.agent_templates
    async with templates.claimed(call.member, args.upload_id) as template:
        agent = await templates.update_agent(call.member, args.agent_id, template, _choices(args))
    return _imported(agent)
