"""``agents-v1``: a team's agents; members list them, admins change them."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from server.common.protocol.ids import AgentId, ProviderId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel, no_control_characters
from server.host.agents.permissions import FAMILIES, FAMILY_OF_TOOL, Permission, known_families
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.services.agents import MAX_AGENTS
from server.host.storage.agents import Agent

routes = HostRouteTable("agents-v1")

AgentName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    AfterValidator(no_control_characters),
]
Instructions = Annotated[str, StringConstraints(max_length=20_000)]
ModelName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(no_control_characters),
]
ToolCallCap = Annotated[WireInt, Field(ge=1, le=100)]
MayAsk = Annotated[
    list[AgentId],
    Field(
        max_length=MAX_AGENTS,
        description="The ids of the team's other agents this one may ask (ask_agent).",
    ),
]


Permissions = Annotated[dict[str, Permission], AfterValidator(known_families)]


class AgentView(WireModel):
    id: str
    name: str
    instructions: str
    provider: str
    model: str | None = Field(description="None: the provider's default model.")
    permissions: dict[str, Permission]
    max_tool_calls: int | None = Field(description="None: the host's default cap.")
    own_browser_session: bool
    browser_profile_id: str | None
    created_at: float
    updated_at: float | None
    may_ask: list[str] = Field(
        description="The ids of the team's agents this one may ask (ask_agent); none by default."
    )


class AgentList(WireModel):
    agents: list[AgentView]
    tool_families: list[str] = Field(description="The gated tool families permissions name.")
    family_of_tool: dict[str, str] = Field(
        description="Each gated tool's family, for an 'always allow' answer to a consent."
    )


class AgentDeleted(WireModel):
    deleted: bool


class AgentDeletion(WireModel):
    threads: int = Field(description="The agent's threads, every member's; all are deleted.")
    running_turns: int = Field(description="Those of its threads with a turn under way now.")


class AgentRef(InboundModel):
    id: AgentId


class CreateAgent(InboundModel):
    name: AgentName
    instructions: Instructions = ""
    provider: ProviderId = "anthropic"
    model: ModelName | None = None
    permissions: Permissions = Field(default_factory=dict)
    max_tool_calls: ToolCallCap | None = None
    may_ask: MayAsk = Field(default_factory=list)


class UpdateAgent(InboundModel):
    """Fields left out stay; ``model`` or ``maxToolCalls`` given as null go back to defaults."""

    id: AgentId
    name: AgentName | None = None
    instructions: Instructions | None = None
    provider: ProviderId | None = None
    model: ModelName | None = None
    permissions: Permissions | None = None
    max_tool_calls: ToolCallCap | None = None
    may_ask: MayAsk | None = None


def _view(agent: Agent) -> AgentView:
    return AgentView(
        id=agent.id,
        name=agent.name,
        instructions=agent.instructions,
        provider=agent.provider,
        model=agent.model,
        permissions=agent.permissions,  # type: ignore[arg-type]
        max_tool_calls=agent.max_tool_calls,
        own_browser_session=agent.own_browser_session,
        browser_profile_id=agent.browser_profile_id,
        created_at=agent.created_at,
        updated_at=agent.updated_at,
        may_ask=list(agent.may_ask),
    )


@routes.route("agents-v1/list", args=NoArgs, least_role=Role.MEMBER)
async def list_agents(call: HostCall, _args: NoArgs) -> AgentList:
    """The team's agents, oldest first, and the tool families their permissions name."""
    agents = await call.host.agents.list_agents(call.peer.team_id)
    return AgentList(
        agents=[_view(a) for a in agents],
        tool_families=list(FAMILIES),
        family_of_tool=dict(FAMILY_OF_TOOL),
    )


@routes.route("agents-v1/get", args=AgentRef, least_role=Role.MEMBER)
async def get_agent(call: HostCall, args: AgentRef) -> AgentView:
    """One agent."""
    return _view(await call.host.agents.get_agent(call.peer.team_id, args.id))


@routes.route("agents-v1/create", args=CreateAgent, least_role=Role.ADMIN)
async def create_agent(call: HostCall, args: CreateAgent) -> AgentView:
    """Create an agent; its tabs open in the team's shared profile until assigned."""
    agent = await call.host.agents.create_agent(
        call.peer.team_id,
        name=args.name,
        instructions=args.instructions,
        provider=args.provider,
        model=args.model,
        permissions=dict(args.permissions),
        max_tool_calls=args.max_tool_calls,
        may_ask=args.may_ask,
    )
    return _view(agent)


@routes.route("agents-v1/update", args=UpdateAgent, least_role=Role.ADMIN)
async def update_agent(call: HostCall, args: UpdateAgent) -> AgentView:
    """Change an agent's name, instructions, provider, model, permissions, cap or the
    agents it may ask."""
    given = args.model_fields_set
    agent = await call.host.agents.update_agent(
        call.peer.team_id,
        args.id,
        name=args.name,
        instructions=args.instructions,
        provider=args.provider,
        model=args.model,
        clear_model="model" in given and args.model is None,
        permissions=None if args.permissions is None else dict(args.permissions),
        max_tool_calls=args.max_tool_calls,
        clear_max_tool_calls="max_tool_calls" in given and args.max_tool_calls is None,
        may_ask=args.may_ask,
    )
    return _view(agent)


@routes.route("agents-v1/duplicate", args=AgentRef, least_role=Role.ADMIN)
async def duplicate_agent(call: HostCall, args: AgentRef) -> AgentView:
    """A copy of an agent with the same settings."""
    return _view(await call.host.agents.duplicate_agent(call.peer.team_id, args.id))


@routes.route("agents-v1/deletion", args=AgentRef, least_role=Role.ADMIN)
async def agent_deletion(call: HostCall, args: AgentRef) -> AgentDeletion:
    """What deleting the agent would take, for the question before it: its threads and
    the turns under way in them (its open tabs are in the team's tab list)."""
    threads, running = await call.host.threads.agent_deletion(call.peer.team_id, args.id)
    return AgentDeletion(threads=threads, running_turns=running)


@routes.route("agents-v1/delete", args=AgentRef, least_role=Role.ADMIN)
async def delete_agent(call: HostCall, args: AgentRef) -> AgentDeleted:
    """Delete an agent: its tabs close, its own partition is cleared, its memories and
    threads go."""
    await call.host.agents.delete_agent(call.peer.team_id, args.id)
    return AgentDeleted(deleted=True)
