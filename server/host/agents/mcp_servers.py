"""The team's MCP servers: owners and admins add them, give them to agents, and test them.

A server runs over stdio (a command the host starts, in a folder under the team's
workspace, ``<data_dir>/workspace/<team>/mcp/<server>``) or Streamable HTTP (an address
judged by the public-only address policy when saved and at every connection, with
``host.mcp_allowed_hosts`` for on-premises servers). Its environment values or headers
are one JSON object sealed by the secret box; only their names are shown, as ``set``.
An HTTP server signed in with OAuth (``McpSignIns``) has its client registration and
tokens sealed the same way, in their own column; they go out as ``Authorization: Bearer``
and are refreshed when about to expire (or once after a 401); a refused refresh turns the
server to ``signIn``. Sessions are kept by ``McpConnections``; a change to a server ends
its session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncConnection
from yarl import URL

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.errors import Conflict, Forbidden, InvalidArgument, NotFound
from server.common.protocol.events import McpServersChanged
from server.common.public_addresses import NameNotResolved, NonPublicAddress, SavedAddressRefused
from server.db.engine import Database
from server.db.tables import MCP_SERVER_CLIENT_SECRET, MCP_SERVER_OAUTH, MCP_SERVER_SECRETS
from server.host.agents.mcp.connections import (
    SIGN_IN_REASON,
    Announce,
    McpConnections,
    ServerState,
    ServerTarget,
    SignInNeeded,
)
from server.host.agents.mcp.http_transport import judge_url
from server.host.agents.mcp.oauth import (
    BearerSource,
    Grant,
    HandClient,
    OAuthClient,
    OAuthFailed,
)
from server.host.agents.mcp.sandbox import StdioSandbox
from server.host.agents.mcp.stdio_transport import StdioCommand
from server.host.agents.mcp.turn_tools import McpTurnTools, OfferedTool, ServerGone
from server.host.services.kept_secrets import refuse_moved
from server.host.signals import Signals
from server.host.storage.agents import AgentRepository
from server.host.storage.mcp_servers import McpAgentLink, McpServerRepository, McpServerRow

log = logging.getLogger(__name__)

Transport = Literal["stdio", "http"]
MAX_SERVERS = 20
MAX_SECRETS = 50
MAX_SECRET_CHARS = 8192
MAX_ARGS = 100
DEFAULT_CALL_TIMEOUT = 60.0
NAME_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
_REFUSED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


class McpAddressRefused(SavedAddressRefused):
    """The server's address is not public, nor allowed by the host's setting."""

    code = "mcpAddressRefused"
    setting = "mcp_allowed_hosts"

    def __init__(self, refused: NonPublicAddress) -> None:
        super().__init__("this MCP server", refused, field="url")


@dataclass(frozen=True)
class McpServerChanged:
    """A server went, or what its sign-in was made for changed (its address or its OAuth
    client): a sign-in under way for it ends, its tokens never sealed."""

    team_id: str
    server_id: str
    deleted: bool


# What an OAuth sign-in was made for: tokens are sealed only while these columns hold.
SIGN_IN_SUBJECT = ("transport", "url", "oauth_client_id", "oauth_client_secret")
# A refreshed grant is kept only while the sign-in it refreshed is still the server's.
REFRESH_SUBJECT = (*SIGN_IN_SUBJECT, "oauth")
CHANGED_DURING_REFRESH = (
    "its address, OAuth client or sign-in changed while its token was refreshed: "
    "an owner or admin signs in to it again"
)
_CLIENT_ID = re.compile(r"^[\x21-\x7e]{1,255}$")


@dataclass(frozen=True, slots=True)
class AgentAccess:
    agent_id: str
    unasked_tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class McpServerView:
    """A server as the team sees it: names of its secrets, never their values."""

    id: str
    name: str
    transport: str
    command: str | None
    args: tuple[str, ...]
    url: str | None
    secret_names: tuple[str, ...]
    call_timeout: float
    enabled: bool
    state: ServerState
    # An OAuth client entered by hand: its id, and whether its secret is set.
    oauth_client_id: str | None
    oauth_client_secret_set: bool
    agents: tuple[AgentAccess, ...]
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class ClientEdit:
    """A change to a server's hand-entered OAuth client: ``None`` keeps a part, ``""``
    clears it (a cleared id clears the secret too)."""

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """What an admin gives for a server (checked by ``McpServerService``)."""

    transport: Transport
    command: str | None
    args: tuple[str, ...]
    url: str | None


class McpServerService:
    """The team's MCP servers, the agents that have them, and each turn's MCP tools."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        box: SecretBox,
        connections: McpConnections,
        announce: Announce,
        data_dir: Path,
        signals: Signals,
    ) -> None:
        self._db = db
        self._signals = signals
        self._clock = clock
        self._box = box
        self._connections = connections
        self._announce = announce
        self._data_dir = data_dir
        self._repo = McpServerRepository()
        self._agents = AgentRepository()
        self.oauth = OAuthClient(connections.policy, connections.resolver, clock)
        self._refreshing: dict[str, asyncio.Lock] = {}

    @property
    def connections(self) -> McpConnections:
        """The live sessions: entered into the host's exit stack, which ends them."""
        return self._connections

    # -- servers --------------------------------------------------------------------------

    def allows_stdio(self, team_id: str) -> bool:
        """Whether this host runs the team's stdio servers (``host.mcp_stdio_teams``)."""
        return self._connections.allows_stdio(team_id)

    @property
    def stdio_sandbox(self) -> StdioSandbox | None:
        """The sandbox stdio servers run in (``host.mcp_stdio_sandbox``); None when off."""
        return self._connections.sandbox

    async def list_servers(self, team_id: str) -> list[McpServerView]:
        async with self._db.read() as conn:
            rows = await self._repo.list_servers(conn, team_id)
            links = {row.id: await self._repo.list_links(conn, team_id, row.id) for row in rows}
        return [self._view(row, links[row.id]) for row in rows]

    async def get_server(self, team_id: str, server_id: str) -> McpServerView:
        async with self._db.read() as conn:
            row = await self._get(conn, team_id, server_id)
            links = await self._repo.list_links(conn, team_id, server_id)
        return self._view(row, links)

    async def add_server(
        self,
        team_id: str,
        account_id: str,
        *,
        name: str,
        spec: ServerSpec,
        secrets: dict[str, str],
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        enabled: bool = True,
        client: ClientEdit | None = None,
    ) -> McpServerView:
        name = _check_name(name)
        spec = await self._check_spec(team_id, spec)
        _check_secrets(spec.transport, secrets)
        server_id = uuid.uuid4().hex
        now = self._clock.now()
        client_values = self._client_values(team_id, server_id, spec.transport, client, None)
        row = McpServerRow(
            id=server_id,
            team_id=team_id,
            name=name,
            transport=spec.transport,
            command=spec.command,
            args=spec.args,
            url=spec.url,
            secret_names=tuple(sorted(secrets)),
            secrets=self._seal(team_id, server_id, secrets),
            call_timeout=call_timeout,
            enabled=enabled,
            created_by=account_id,
            created_at=now,
            updated_at=now,
            oauth_client_id=client_values.get("oauth_client_id"),
            oauth_client_secret=client_values.get("oauth_client_secret"),
        )
        async with self._db.write() as conn:
            if len(await self._repo.list_servers(conn, team_id)) >= MAX_SERVERS:
                raise Conflict(
                    f"A team has at most {MAX_SERVERS} MCP servers", code="mcpServerLimit"
                )
            await self._name_free(conn, team_id, name, None)
            await self._repo.add_server(conn, row)
        log.info("mcp server added", extra={"team_id": team_id, "server_id": server_id})
        self._changed(team_id)
        return self._view(row, [])

    async def update_server(
        self,
        team_id: str,
        server_id: str,
        *,
        name: str | None = None,
        spec: ServerSpec | None = None,
        secrets: dict[str, str] | None = None,
        call_timeout: float | None = None,
        enabled: bool | None = None,
        client: ClientEdit | None = None,
    ) -> McpServerView:
        """Change what is given; the rest stays (``secrets`` absent keeps the sealed ones,
        an empty object clears them). The server's session ends; a new address or OAuth
        client drops its sign-in (and ends one under way)."""
        values: dict[str, object] = {}
        async with self._db.read() as conn:
            row = await self._get(conn, team_id, server_id)
        if name is not None:
            values["name"] = _check_name(name)
        if spec is not None:
            spec = await self._check_spec(team_id, spec)
            _refuse_moved_secrets(row, spec, secrets, client)
            values.update(
                transport=spec.transport, command=spec.command, args=spec.args, url=spec.url
            )
            if spec.url != row.url or spec.transport != row.transport:
                values["oauth"] = None  # a sign-in belongs to the address it was made for
        transport = spec.transport if spec is not None else row.transport
        if secrets is not None:
            _check_secrets(transport, secrets)
            values["secret_names"] = tuple(sorted(secrets))
            values["secrets"] = self._seal(team_id, server_id, secrets)
        elif spec is not None and spec.transport != row.transport:
            # Environment values are not headers: a change of transport clears them.
            values["secret_names"], values["secrets"] = (), None
        if transport == "stdio" and row.oauth_client_id is not None:
            client = ClientEdit("", "")  # only an HTTP server signs in
        client_values = {
            column: value
            for column, value in self._client_values(
                team_id, server_id, transport, client, row
            ).items()
            if getattr(row, column) != value
        }
        if client_values:
            values.update(client_values, oauth=None)  # a sign-in belongs to its client
        if call_timeout is not None:
            values["call_timeout"] = call_timeout
        if enabled is not None:
            values["enabled"] = enabled
        async with self._db.write() as conn:
            await self._get(conn, team_id, server_id)
            if name is not None:
                await self._name_free(conn, team_id, str(values["name"]), server_id)
            values["updated_at"] = self._clock.now()
            await self._repo.update_server(conn, team_id, server_id, **values)
            row = await self._get(conn, team_id, server_id)
            links = await self._repo.list_links(conn, team_id, server_id)
        await self._connections.forget(team_id, server_id)
        if "oauth" in values:
            # Awaited: the answer comes once a sign-in made for the old address has ended.
            await self._signals.deliver(McpServerChanged(team_id, server_id, deleted=False))
        self._changed(team_id)
        return self._view(row, links)

    async def delete_server(self, team_id: str, server_id: str) -> None:
        async with self._db.write() as conn:
            await self._get(conn, team_id, server_id)
            await self._repo.remove_server(conn, team_id, server_id)
        await self._connections.forget(team_id, server_id)
        log.info("mcp server deleted", extra={"team_id": team_id, "server_id": server_id})
        await self._signals.deliver(McpServerChanged(team_id, server_id, deleted=True))
        self._changed(team_id)

    async def test_server(self, team_id: str, server_id: str) -> ServerState:
        """Connect (or use the running session), initialize and list the tools; its state."""
        async with self._db.read() as conn:
            row = await self._get(conn, team_id, server_id)
        return await self._connections.ready(self._target(row), after_crash="now")

    async def set_agent(
        self,
        team_id: str,
        server_id: str,
        agent_id: str,
        *,
        enabled: bool,
        unasked_tools: list[str],
    ) -> McpServerView:
        """Give an agent the server (with the tools it may call without asking), or not."""
        async with self._db.write() as conn:
            await self._get(conn, team_id, server_id)
            if await self._agents.get_agent(conn, team_id, agent_id) is None:
                raise NotFound("No such agent in this team", code="agentNotFound")
            if enabled:
                link = McpAgentLink(team_id, server_id, agent_id, tuple(sorted(set(unasked_tools))))
                await self._repo.set_link(conn, link)
            else:
                await self._repo.remove_link(conn, team_id, server_id, agent_id)
            row = await self._get(conn, team_id, server_id)
            links = await self._repo.list_links(conn, team_id, server_id)
        self._changed(team_id)
        return self._view(row, links)

    async def agent_deleted(self, team_id: str, agent_id: str) -> None:
        """An agent went: it has no server any more (said only when it had one)."""
        async with self._db.write() as conn:
            removed = await self._repo.remove_links_of_agent(conn, team_id, agent_id)
        if removed:
            self._changed(team_id)

    # -- turns ----------------------------------------------------------------------------

    async def turn_tools(self, team_id: str, agent_id: str) -> McpTurnTools | None:
        """The agent's MCP tools for a turn (its enabled servers are started as needed); a
        server that cannot start offers none, and says why in its status."""
        async with self._db.read() as conn:
            pairs = await self._repo.list_servers_of_agent(conn, team_id, agent_id)
        targets = [self._target(row) for row, _link in pairs]
        # At once: a server that is slow to start holds up no other.
        states = await asyncio.gather(*(self._connections.ready(t) for t in targets))
        offered: dict[str, OfferedTool] = {}
        for (_row, link), target, state in zip(pairs, targets, states, strict=True):
            unasked = frozenset(link.unasked_tools)
            for tool in state.tools:
                offered[tool.full_name] = OfferedTool(target, tool, tool.name not in unasked)
        if not offered:
            return None
        return McpTurnTools(self._connections, offered, agent_id, self)

    async def current_target(self, team_id: str, server_id: str, agent_id: str) -> ServerTarget:
        """The server as it is now, for a call of ``agent_id``'s in a running turn; raises
        ``ServerGone`` when it was deleted, disabled or taken from the agent."""
        async with self._db.read() as conn:
            pairs = await self._repo.list_servers_of_agent(conn, team_id, agent_id)
        for row, _link in pairs:
            if row.id == server_id:
                return self._target(row)
        raise ServerGone(
            "the server was removed, disabled or taken from this agent since the turn began; "
            "the call was not made"
        )

    # -- OAuth ----------------------------------------------------------------------------

    async def http_server(self, team_id: str, server_id: str) -> McpServerRow:
        """The team's server, which must be reached over HTTP (a sign-in's subject)."""
        async with self._db.read() as conn:
            row = await self._get(conn, team_id, server_id)
        if row.transport != "http" or row.url is None:
            raise InvalidArgument(
                "Only an HTTP MCP server signs in", code="mcpSignInNotNeeded", field="serverId"
            )
        return row

    def client_of(self, row: McpServerRow) -> HandClient | None:
        """The OAuth client an admin entered for the server, if any (its secret opened)."""
        if row.oauth_client_id is None:
            return None
        secret = None
        if row.oauth_client_secret is not None:
            binding = MCP_SERVER_CLIENT_SECRET.binding(row.team_id, row.id)
            try:
                secret = self._box.decrypt(row.oauth_client_secret, binding).decode("utf-8")
            except SecretUnreadable:
                log.warning("mcp server client secret unreadable", extra={"server_id": row.id})
        return HandClient(row.oauth_client_id, secret)

    def grant_of(self, row: McpServerRow) -> Grant | None:
        """The server's sealed sign-in (its client and tokens), if it has one."""
        if row.oauth is None:
            return None
        try:
            data = self._box.decrypt(row.oauth, MCP_SERVER_OAUTH.binding(row.team_id, row.id))
        except SecretUnreadable:
            log.warning("mcp server sign-in unreadable", extra={"server_id": row.id})
            return None
        return Grant.from_json(data)

    async def save_sign_in(self, made_for: McpServerRow, grant: Grant) -> bool:
        """Seal a finished sign-in's grant, only while the server still is what the sign-in
        was made for (not deleted, the same address and client); whether it was sealed."""
        return await self._seal_if_unchanged(made_for, grant, SIGN_IN_SUBJECT)

    async def _seal_if_unchanged(
        self, read: McpServerRow, grant: Grant, subject: tuple[str, ...]
    ) -> bool:
        """Seal ``grant`` as the server's sign-in, bound to its row and team, in one
        statement that holds only while the ``subject`` columns are as ``read`` had them."""
        team_id, server_id = read.team_id, read.id
        sealed = self._box.encrypt(grant.to_json(), MCP_SERVER_OAUTH.binding(team_id, server_id))
        unchanged = {name: getattr(read, name) for name in subject}
        async with self._db.write() as conn:
            return await self._repo.update_server_if(
                conn, team_id, server_id, unchanged, oauth=sealed
            )

    async def signed_in(self, team_id: str, server_id: str) -> ServerState:
        """A sign-in ended with tokens: the server's session starts again with them."""
        await self._connections.forget(team_id, server_id)
        async with self._db.read() as conn:
            row = await self._get(conn, team_id, server_id)
        return await self._connections.ready(self._target(row), after_crash="now")

    def _bearer(self, team_id: str, server_id: str) -> BearerSource:
        async def token(force: bool) -> str:
            lock = self._refreshing.setdefault(server_id, asyncio.Lock())
            async with lock:
                async with self._db.read() as conn:
                    row = await self._get(conn, team_id, server_id)
                grant = self.grant_of(row)
                if grant is None or grant.access_token is None:
                    raise SignInNeeded(
                        (grant and grant.ended) or SIGN_IN_REASON,
                    )
                if not force and not grant.expiring(self._clock.now()):
                    return grant.access_token
                try:
                    grant = await self.oauth.refresh(grant)
                except OAuthFailed as exc:
                    ended = f"its sign-in ended ({exc}): an owner or admin signs in to it again"
                    dropped = replace(grant, access_token=None, ended=ended)
                    # Unless the sign-in changed meanwhile: a new one, or none for a new address.
                    await self._seal_if_unchanged(row, dropped, REFRESH_SUBJECT)
                    raise SignInNeeded(ended) from None
                if not await self._seal_if_unchanged(row, grant, REFRESH_SUBJECT):
                    # The address, the client or the sign-in changed while the token was
                    # refreshed: these tokens are of the sign-in that was, and are dropped.
                    raise SignInNeeded(CHANGED_DURING_REFRESH)
                log.info("mcp server token refreshed", extra={"server_id": server_id})
                assert grant.access_token is not None
                return grant.access_token

        return token

    # -- helpers --------------------------------------------------------------------------

    def _target(self, row: McpServerRow) -> ServerTarget:
        secrets = self._open(row)
        if row.transport == "stdio":
            assert row.command is not None
            folder = self._data_dir / "workspace" / row.team_id / "mcp" / row.id
            command = StdioCommand(row.command, row.args, secrets, folder)
            return ServerTarget(
                row.team_id, row.id, row.name, "stdio", row.call_timeout, command=command
            )
        # A server signed in once keeps asking its sign-in (which says why it ended).
        bearer = None if row.oauth is None else self._bearer(row.team_id, row.id)
        return ServerTarget(
            row.team_id,
            row.id,
            row.name,
            "http",
            row.call_timeout,
            url=row.url,
            headers=secrets,
            bearer=bearer,
        )

    def _client_values(
        self,
        team_id: str,
        server_id: str,
        transport: str,
        client: ClientEdit | None,
        row: McpServerRow | None,
    ) -> dict[str, Any]:
        """The client columns ``client`` changes (none when it changes nothing)."""
        if client is None or (client.client_id is None and client.client_secret is None):
            return {}
        if transport != "http" and (client.client_id or client.client_secret):
            raise InvalidArgument(
                "Only an HTTP MCP server signs in with an OAuth client", field="oauthClientId"
            )
        values: dict[str, Any] = {}
        client_id = row.oauth_client_id if row is not None else None
        if client.client_id is not None:
            client_id = client.client_id.strip() or None
            if client_id is not None and not _CLIENT_ID.match(client_id):
                raise InvalidArgument(
                    "An OAuth client id is 1 to 255 visible characters, without spaces",
                    field="oauthClientId",
                )
            values["oauth_client_id"] = client_id
            if client_id is None:
                values["oauth_client_secret"] = None
        if client.client_secret is not None and client_id is not None:
            secret = client.client_secret
            if len(secret) > MAX_SECRET_CHARS or any(c in secret for c in "\x00\r\n"):
                raise InvalidArgument(
                    "The OAuth client secret is too long or has a NUL or line break",
                    field="oauthClientSecret",
                )
            binding = MCP_SERVER_CLIENT_SECRET.binding(team_id, server_id)
            values["oauth_client_secret"] = (
                self._box.encrypt(secret.encode("utf-8"), binding) if secret else None
            )
        elif client.client_secret and client_id is None:
            raise InvalidArgument(
                "An OAuth client secret goes with its client id", field="oauthClientId"
            )
        return values

    def _seal(self, team_id: str, server_id: str, secrets: dict[str, str]) -> bytes | None:
        if not secrets:
            return None
        data = json.dumps(secrets, sort_keys=True).encode("utf-8")
        return self._box.encrypt(data, MCP_SERVER_SECRETS.binding(team_id, server_id))

    def _open(self, row: McpServerRow) -> dict[str, str]:
        if row.secrets is None:
            return {}
        try:
            data = self._box.decrypt(row.secrets, MCP_SERVER_SECRETS.binding(row.team_id, row.id))
        except SecretUnreadable:
            log.warning("mcp server secrets unreadable", extra={"server_id": row.id})
            return {}
        values = json.loads(data)
        return {str(k): str(v) for k, v in values.items()}

    async def _check_spec(self, team_id: str, spec: ServerSpec) -> ServerSpec:
        if spec.transport == "stdio":
            if not self._connections.allows_stdio(team_id):
                raise Forbidden(
                    "This host runs no stdio MCP server for this team: each runs code on the "
                    "host's machine, so its operator allows them (host.mcp_stdio_teams). "
                    "Add an HTTP server instead.",
                    code="mcpStdioNotAllowed",
                    field="transport",
                )
            command = (spec.command or "").strip()
            if not command or "\x00" in command or len(command) > 1000:
                raise InvalidArgument(
                    "A stdio MCP server needs its command", code="invalidArgument", field="command"
                )
            if len(spec.args) > MAX_ARGS or any("\x00" in arg for arg in spec.args):
                raise InvalidArgument(
                    f"At most {MAX_ARGS} arguments, without NUL characters", field="args"
                )
            return ServerSpec("stdio", command, spec.args, None)
        url = _check_url(spec.url or "")
        try:
            await judge_url(url, self._connections.policy, self._connections.resolver)
        except NonPublicAddress as refused:
            raise McpAddressRefused(refused) from None
        except NameNotResolved as exc:
            raise InvalidArgument(str(exc), code="nameNotResolved", field="url") from None
        return ServerSpec("http", None, (), url)

    async def _name_free(
        self, conn: AsyncConnection, team_id: str, name: str, server_id: str | None
    ) -> None:
        found = await self._repo.get_server_named(conn, team_id, name)
        if found is not None and found.id != server_id:
            raise Conflict(
                f"The team has an MCP server named {name} already",
                code="mcpServerNameTaken",
                field="name",
            )

    async def _get(self, conn: AsyncConnection, team_id: str, server_id: str) -> McpServerRow:
        row = await self._repo.get_server(conn, team_id, server_id)
        if row is None:
            raise NotFound("No such MCP server in this team", code="mcpServerNotFound")
        return row

    def _view(self, row: McpServerRow, links: list[McpAgentLink]) -> McpServerView:
        return McpServerView(
            id=row.id,
            name=row.name,
            transport=row.transport,
            command=row.command,
            args=row.args,
            url=row.url,
            secret_names=row.secret_names,
            call_timeout=row.call_timeout,
            enabled=row.enabled,
            state=self._connections.state(row.team_id, row.id),
            oauth_client_id=row.oauth_client_id,
            oauth_client_secret_set=row.oauth_client_secret is not None,
            agents=tuple(AgentAccess(link.agent_id, link.unasked_tools) for link in links),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    def _changed(self, team_id: str) -> None:
        self._announce(team_id, McpServersChanged())


def _check_name(name: str) -> str:
    name = name.strip()
    if not NAME_PATTERN.match(name) or "--" in name:
        raise InvalidArgument(
            "An MCP server's name is 1 to 32 lowercase letters, digits and single hyphens "
            "(it is part of its tools' names)",
            field="name",
        )
    return name


def _check_url(url: str) -> str:
    text = url.strip()
    try:
        parsed = URL(text)
    except ValueError:
        parsed = None
    if (
        parsed is None
        or parsed.scheme not in ("http", "https")
        or not parsed.raw_host
        or not parsed.is_absolute()
        or parsed.raw_user is not None
        or parsed.raw_password is not None
        or len(text) > 2048
    ):
        raise InvalidArgument(
            "An HTTP MCP server's address is an http or https address with a host and no "
            "user name (put a token in a header)",
            code="invalidUrl",
            field="url",
        )
    return text


def _check_secrets(transport: str, secrets: dict[str, str]) -> None:
    field = "env" if transport == "stdio" else "headers"
    pattern = _ENV_NAME if transport == "stdio" else _HEADER_NAME
    if len(secrets) > MAX_SECRETS:
        raise InvalidArgument(f"At most {MAX_SECRETS} {field} values", field=field)
    for key, value in secrets.items():
        if not pattern.match(key) or key.lower() in _REFUSED_HEADERS:
            raise InvalidArgument(f"{key[:40]!r} is not a name {field} may use", field=field)
        if len(value) > MAX_SECRET_CHARS or "\x00" in value or "\n" in value or "\r" in value:
            raise InvalidArgument(
                f"The value of {key} is too long or has a NUL or line break", field=field
            )


def _refuse_moved_secrets(
    row: McpServerRow,
    spec: ServerSpec | None,
    secrets: dict[str, str] | None,
    client: ClientEdit | None,
) -> None:
    """A saved secret is kept only while it goes where it went (``kept_secrets``): an HTTP
    server's headers and OAuth client secret to its host, encrypted if they were (the
    client secret to the authorization server found from it), a stdio server's
    environment to its command."""
    if spec is None or spec.transport != row.transport:
        return  # nothing moved, or a new transport clears the secrets anyway
    if spec.transport == "http":
        (scheme, host), (was_scheme, was_host) = _host_of(spec.url), _host_of(row.url)
        moved = host != was_host or (was_scheme == "https" and scheme != "https")
        what = "the server's host or its encryption"
    else:
        moved = spec.command != row.command or tuple(spec.args) != tuple(row.args)
        what = "the server's command or arguments"
    if not moved:
        return
    if secrets is None and row.secret_names:
        refuse_moved("headers" if spec.transport == "http" else "env", what)
    # The saved client secret stays unless a new one is given or the client is cleared
    # (``_client_values``): a new client id alone keeps it.
    keeps_client_secret = client is None or (
        client.client_secret is None
        and (client.client_id is None or client.client_id.strip() != "")
    )
    if row.oauth_client_secret is not None and keeps_client_secret:
        refuse_moved("oauthClientSecret", what)


def _host_of(url: str | None) -> tuple[str, str]:
    parts = URL(url or "")
    return parts.scheme.lower(), (parts.host or "").lower()
