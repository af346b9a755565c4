"""``mcp-servers-v1``: the team's MCP servers, their status and tools, and the agents that
have them.

Owners and admins add, change, delete, test and give servers to agents; members may list
them. Environment values, headers and an OAuth client's secret are written, never read
back: a server answers their names only (the secret as ``set``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.ids import AgentId, McpServerId, OAuthClientId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.mcp.connections import ServerState
from server.host.agents.mcp.sandbox import NetworkMode
from server.host.agents.mcp_servers import (
    MAX_ARGS,
    MAX_SECRETS,
    ClientEdit,
    McpServerView,
    ServerSpec,
)
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("mcp-servers-v1")

Name = Annotated[str, StringConstraints(min_length=1, max_length=32)]
Command = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
Arg = Annotated[str, StringConstraints(max_length=4000)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=2048)]
SecretName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
SecretValue = Annotated[str, StringConstraints(max_length=8192)]
Secrets = Annotated[dict[SecretName, SecretValue], Field(max_length=MAX_SECRETS)]
ToolName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Timeout = Annotated[float, Field(ge=1, le=3600)]


class AgentAccessView(WireModel):
    agent_id: str
    unasked_tools: list[str] = Field(description="tools this agent calls without asking")


class ServerStatusView(WireModel):
    status: Literal["idle", "starting", "connected", "error", "signIn"]
    reason: str | None = Field(description="why, in words, when the status is error")
    tools: int = Field(description="how many of its tools agents are offered")
    problems: list[str] = Field(description="tools not offered, each with the reason")
    code: str | None = Field(description="the stable name of why, where it has one")


class ServerView(WireModel):
    id: str
    name: str = Field(description="part of its tools' names: mcp__<name>__<tool>")
    transport: Literal["stdio", "http"]
    command: str | None
    args: list[str]
    url: str | None
    env: dict[str, str] = Field(description="its environment variables' names, each 'set'")
    headers: dict[str, str] = Field(description="its headers' names, each 'set'")
    oauth_client_id: str | None = Field(
        description="http: the OAuth client an admin entered (for a server that registers none)"
    )
    oauth_client_secret: Literal["set"] | None = Field(
        description="'set' when that client has a secret; never the secret"
    )
    call_timeout: float
    enabled: bool
    status: ServerStatusView
    agents: list[AgentAccessView]
    created_at: float
    updated_at: float


class ServerList(WireModel):
    servers: list[ServerView]
    stdio_allowed: bool = Field(
        description="whether this host runs the team's stdio servers (host.mcp_stdio_teams)"
    )
    stdio_sandboxed: bool = Field(
        description="whether this host runs stdio servers in its sandbox, where they see the "
        "system's programs and their own folder alone (host.mcp_stdio_sandbox)"
    )
    stdio_network: bool = Field(
        description="whether a stdio server has the network (host.mcp_stdio_network; always "
        "outside the sandbox)"
    )
    stdio_network_kind: NetworkMode = Field(
        description="which network: none, public addresses through the host's proxy "
        "(proxied), or the host's own, its loopback included (host; always outside the "
        "sandbox)"
    )


class ToolView(WireModel):
    name: str = Field(description="the tool's name on its server")
    full_name: str = Field(description="as agents see it: mcp__<server>__<tool>")
    description: str
    hints: list[str] = Field(description="what the server says of it (read-only, …)")


class ToolList(WireModel):
    tools: list[ToolView]
    status: ServerStatusView


class ServerDeleted(WireModel):
    deleted: bool


class AddServer(InboundModel):
    name: Name
    transport: Literal["stdio", "http"]
    command: Command | None = None
    args: Annotated[list[Arg], Field(max_length=MAX_ARGS)] = Field(default_factory=list)
    url: Url | None = None
    env: Secrets = Field(default_factory=dict, description="stdio: environment values")
    headers: Secrets = Field(default_factory=dict, description="http: headers")
    oauth_client_id: OAuthClientId | None = Field(
        None, description="http: an OAuth client registered by hand, for a sign-in"
    )
    oauth_client_secret: SecretValue | None = Field(
        None, description="http: that client's secret, if it has one (sealed)"
    )
    call_timeout: Timeout = 60.0
    enabled: bool = True


class UpdateServer(InboundModel):
    id: McpServerId
    name: Name | None = None
    transport: Literal["stdio", "http"] | None = Field(
        None, description="with command and args, or url: replaces how it is reached"
    )
    command: Command | None = None
    args: Annotated[list[Arg], Field(max_length=MAX_ARGS)] | None = None
    url: Url | None = None
    env: Secrets | None = Field(None, description="absent keeps the sealed ones")
    headers: Secrets | None = Field(None, description="absent keeps the sealed ones")
    oauth_client_id: OAuthClientId | None = Field(
        None, description="absent keeps it; empty clears it and its secret"
    )
    oauth_client_secret: SecretValue | None = Field(
        None, description="absent keeps the sealed one; empty clears it"
    )
    call_timeout: Timeout | None = None
    enabled: bool | None = None


class ServerRef(InboundModel):
    id: McpServerId


class SetAgent(InboundModel):
    id: McpServerId
    agent_id: AgentId
    enabled: bool
    unasked_tools: Annotated[list[ToolName], Field(max_length=1000)] = Field(
        default_factory=list, description="tools (names on the server) run without asking"
    )


def _status(state: ServerState) -> ServerStatusView:
    return ServerStatusView(
        status=state.status,
        reason=state.reason,
        tools=len(state.tools),
        problems=list(state.problems),
        code=state.code,
    )


def _view(view: McpServerView) -> ServerView:
    names = dict.fromkeys(view.secret_names, "set")
    return ServerView(
        id=view.id,
        name=view.name,
        transport="stdio" if view.transport == "stdio" else "http",
        command=view.command,
        args=list(view.args),
        url=view.url,
        env=names if view.transport == "stdio" else {},
        headers=names if view.transport == "http" else {},
        oauth_client_id=view.oauth_client_id,
        oauth_client_secret="set" if view.oauth_client_secret_set else None,
        call_timeout=view.call_timeout,
        enabled=view.enabled,
        status=_status(view.state),
        agents=[
            AgentAccessView(agent_id=a.agent_id, unasked_tools=list(a.unasked_tools))
            for a in view.agents
        ],
        created_at=view.created_at,
        updated_at=view.updated_at,
    )


def _spec(transport: str, command: str | None, args: list[str], url: str | None) -> ServerSpec:
    return ServerSpec("stdio" if transport == "stdio" else "http", command, tuple(args), url)


@routes.route("mcp-servers-v1/list", args=NoArgs, least_role=Role.MEMBER)
async def list_servers(call: HostCall, _args: NoArgs) -> ServerList:
    """The team's MCP servers with their status; secrets by name only."""
    views = await call.host.mcp_servers.list_servers(call.peer.team_id)
    sandbox = call.host.mcp_servers.stdio_sandbox
    return ServerList(
        servers=[_view(view) for view in views],
        stdio_allowed=call.host.mcp_servers.allows_stdio(call.peer.team_id),
        stdio_sandboxed=sandbox is not None,
        stdio_network=sandbox is None or sandbox.network != "none",
        stdio_network_kind="host" if sandbox is None else sandbox.network,
    )


@routes.route("mcp-servers-v1/add", args=AddServer, least_role=Role.ADMIN)
async def add_server(call: HostCall, args: AddServer) -> ServerView:
    """Add a server (stdio: command, args, env; http: url, headers, an OAuth client)."""
    view = await call.host.mcp_servers.add_server(
        call.peer.team_id,
        call.peer.account_id,
        name=args.name,
        spec=_spec(args.transport, args.command, args.args, args.url),
        secrets=dict(args.env if args.transport == "stdio" else args.headers),
        call_timeout=args.call_timeout,
        enabled=args.enabled,
        client=ClientEdit(args.oauth_client_id, args.oauth_client_secret),
    )
    return _view(view)


@routes.route("mcp-servers-v1/update", args=UpdateServer, least_role=Role.ADMIN)
async def update_server(call: HostCall, args: UpdateServer) -> ServerView:
    """Change a server; its session ends and the next use starts a new one."""
    spec = None
    if args.transport is not None:
        spec = _spec(args.transport, args.command, args.args or [], args.url)
    secrets = args.env if args.env is not None else args.headers
    view = await call.host.mcp_servers.update_server(
        call.peer.team_id,
        args.id,
        name=args.name,
        spec=spec,
        secrets=None if secrets is None else dict(secrets),
        call_timeout=args.call_timeout,
        enabled=args.enabled,
        client=ClientEdit(args.oauth_client_id, args.oauth_client_secret),
    )
    return _view(view)


@routes.route("mcp-servers-v1/delete", args=ServerRef, least_role=Role.ADMIN)
async def delete_server(call: HostCall, args: ServerRef) -> ServerDeleted:
    """Remove a server; its session ends and no agent has it any more."""
    await call.host.mcp_servers.delete_server(call.peer.team_id, args.id)
    return ServerDeleted(deleted=True)


@routes.route("mcp-servers-v1/test", args=ServerRef, least_role=Role.ADMIN)
async def test_server(call: HostCall, args: ServerRef) -> ToolList:
    """Connect, initialize and list the tools; answers them and the server's status."""
    state = await call.host.mcp_servers.test_server(call.peer.team_id, args.id)
    return ToolList(
        tools=[
            ToolView(
                name=tool.name,
                full_name=tool.full_name,
                description=tool.description,
                hints=list(tool.hints),
            )
            for tool in state.tools
        ],
        status=_status(state),
    )


@routes.route("mcp-servers-v1/set_agent", args=SetAgent, least_role=Role.ADMIN)
async def set_agent(call: HostCall, args: SetAgent) -> ServerView:
    """Give an agent the server (and the tools it may call without asking), or take it."""
    view = await call.host.mcp_servers.set_agent(
        call.peer.team_id,
        args.id,
        args.agent_id,
        enabled=args.enabled,
        unasked_tools=list(args.unasked_tools),
    )
    return _view(view)
