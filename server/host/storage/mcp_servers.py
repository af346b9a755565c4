"""MCP servers and the agents that have them: the rows of ``mcp_servers`` and
``mcp_server_agents``, one team at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import mcp_server_agents, mcp_servers

servers = mcp_servers
links = mcp_server_agents


@dataclass(frozen=True, slots=True)
class McpServerRow:
    """One server. ``secrets`` is secret-box output (environment values or headers),
    ``oauth`` too (a sign-in's client and tokens), and ``oauth_client_secret`` (the secret
    of a client an admin entered)."""

    id: str
    team_id: str
    name: str
    transport: str
    command: str | None
    args: tuple[str, ...]
    url: str | None
    secret_names: tuple[str, ...]
    secrets: bytes | None = field(repr=False)
    call_timeout: float
    enabled: bool
    created_by: str
    created_at: float
    updated_at: float
    # An OAuth sign-in's registration and tokens, secret-box output.
    oauth: bytes | None = field(default=None, repr=False)
    # An OAuth client an admin entered: its id, and its secret (secret-box output).
    oauth_client_id: str | None = None
    oauth_client_secret: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class McpAgentLink:
    """An agent that has a server, and the tools it may call without asking."""

    team_id: str
    server_id: str
    agent_id: str
    unasked_tools: tuple[str, ...]


def _server(mapping: Any) -> McpServerRow:
    values = dict(mapping)
    values["args"] = tuple(values["args"] or ())
    values["secret_names"] = tuple(values["secret_names"] or ())
    return McpServerRow(**values)


def _link(mapping: Any) -> McpAgentLink:
    values = dict(mapping)
    values["unasked_tools"] = tuple(values["unasked_tools"] or ())
    return McpAgentLink(**values)


class McpServerRepository:
    """Reads and writes of MCP servers and their agents; every one names the team."""

    async def list_servers(self, conn: AsyncConnection, team_id: str) -> list[McpServerRow]:
        result = await conn.execute(
            sa.select(servers)
            .where(servers.c.team_id == team_id)
            .order_by(servers.c.name, servers.c.id)
        )
        return [_server(row._mapping) for row in result]

    async def get_server(
        self, conn: AsyncConnection, team_id: str, server_id: str
    ) -> McpServerRow | None:
        result = await conn.execute(
            sa.select(servers).where(servers.c.team_id == team_id, servers.c.id == server_id)
        )
        row = result.first()
        return None if row is None else _server(row._mapping)

    async def get_server_named(
        self, conn: AsyncConnection, team_id: str, name: str
    ) -> McpServerRow | None:
        result = await conn.execute(
            sa.select(servers).where(servers.c.team_id == team_id, servers.c.name == name)
        )
        row = result.first()
        return None if row is None else _server(row._mapping)

    async def add_server(self, conn: AsyncConnection, row: McpServerRow) -> None:
        values = {name: getattr(row, name) for name in row.__slots__}
        values["args"] = list(row.args)
        values["secret_names"] = list(row.secret_names)
        await conn.execute(servers.insert().values(**values))

    async def update_server(
        self, conn: AsyncConnection, team_id: str, server_id: str, **values: Any
    ) -> None:
        """Set the named columns of one server."""
        for name in ("args", "secret_names"):
            if name in values:
                values[name] = list(values[name])
        await conn.execute(
            servers.update()
            .where(servers.c.team_id == team_id, servers.c.id == server_id)
            .values(**values)
        )

    async def update_server_if(
        self,
        conn: AsyncConnection,
        team_id: str,
        server_id: str,
        unchanged: dict[str, Any],
        **values: Any,
    ) -> bool:
        """Set the named columns of one server only while the ``unchanged`` columns still
        hold those values (in one statement); whether it did."""
        held = [servers.c[name].is_not_distinct_from(value) for name, value in unchanged.items()]
        result = await conn.execute(
            servers.update()
            .where(servers.c.team_id == team_id, servers.c.id == server_id, *held)
            .values(**values)
        )
        return bool(result.rowcount)

    async def remove_server(self, conn: AsyncConnection, team_id: str, server_id: str) -> None:
        """Remove a server and every agent's link to it."""
        await conn.execute(
            links.delete().where(links.c.team_id == team_id, links.c.server_id == server_id)
        )
        await conn.execute(
            servers.delete().where(servers.c.team_id == team_id, servers.c.id == server_id)
        )

    async def list_links(
        self, conn: AsyncConnection, team_id: str, server_id: str
    ) -> list[McpAgentLink]:
        """The agents that have a server."""
        result = await conn.execute(
            sa.select(links)
            .where(links.c.team_id == team_id, links.c.server_id == server_id)
            .order_by(links.c.agent_id)
        )
        return [_link(row._mapping) for row in result]

    async def list_servers_of_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> list[tuple[McpServerRow, McpAgentLink]]:
        """The enabled servers an agent has, each with its link."""
        result = await conn.execute(
            sa.select(servers, links.c.unasked_tools)
            .join(
                links,
                sa.and_(links.c.server_id == servers.c.id, links.c.team_id == servers.c.team_id),
            )
            .where(
                servers.c.team_id == team_id,
                links.c.agent_id == agent_id,
                servers.c.enabled.is_(True),
            )
            .order_by(servers.c.name)
        )
        pairs = []
        for row in result:
            values = dict(row._mapping)
            unasked = values.pop("unasked_tools")
            server = _server(values)
            pairs.append((server, McpAgentLink(team_id, server.id, agent_id, tuple(unasked or ()))))
        return pairs

    async def set_link(self, conn: AsyncConnection, link: McpAgentLink) -> None:
        """Give an agent a server (or change its unasked tools)."""
        await self.remove_link(conn, link.team_id, link.server_id, link.agent_id)
        await conn.execute(
            links.insert().values(
                team_id=link.team_id,
                server_id=link.server_id,
                agent_id=link.agent_id,
                unasked_tools=list(link.unasked_tools),
            )
        )

    async def remove_link(
        self, conn: AsyncConnection, team_id: str, server_id: str, agent_id: str
    ) -> None:
        await conn.execute(
            links.delete().where(
                links.c.team_id == team_id,
                links.c.server_id == server_id,
                links.c.agent_id == agent_id,
            )
        )

    async def remove_links_of_agent(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> int:
        """An agent is deleted: it has no server any more. How many it had."""
        result = await conn.execute(
            links.delete().where(links.c.team_id == team_id, links.c.agent_id == agent_id)
        )
        return result.rowcount
