"""The ``remember`` tool, the agent's memory store, and the site memories a snapshot shows.

A memory tied to a site (a host without ``www.``) comes back in the first snapshot
of that site, or of a subdomain, in each turn: how a site works is most useful
when the agent is looking at it, and once per turn is enough.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints

from server.common.clock import Clock
from server.db.engine import Database
from server.host.storage.memories import AgentMemory, AgentMemoryRepository
from server.host.tools.base import Tool, ToolArgs, ToolContext, ToolFailure

MAX_MEMORY_CHARS = 2000
MAX_MEMORIES_PER_AGENT = 1000
SITE_MEMORIES_SHOWN = 5

_LABEL = re.compile(r"^(?!-)[a-z0-9\-_]{1,63}(?<!-)$")


class MemoryStore:
    """The agents' memories of one host's teams, in the host's database."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock
        self._repo = AgentMemoryRepository()

    async def add_memory(
        self, team_id: str, agent_id: str, text: str, site: str | None
    ) -> AgentMemory:
        """Keeps one memory; refuses when the agent already holds the most it may."""
        memory = AgentMemory(uuid.uuid4().hex, team_id, agent_id, site, text, self._clock.now())
        async with self._db.write() as conn:
            if await self._repo.count_memories(conn, team_id, agent_id) >= MAX_MEMORIES_PER_AGENT:
                raise ToolFailure(
                    "memoryLimit",
                    f"this agent already keeps {MAX_MEMORIES_PER_AGENT} memories; "
                    "ask a person to remove old ones",
                )
            await self._repo.add_memory(conn, memory)
        return memory

    async def list_memories(self, team_id: str, agent_id: str) -> list[AgentMemory]:
        async with self._db.read() as conn:
            return await self._repo.list_memories(conn, team_id, agent_id)

    async def memories_for_host(
        self, team_id: str, agent_id: str, host: str, *, limit: int = SITE_MEMORIES_SHOWN
    ) -> list[AgentMemory]:
        """Memories for ``host`` and its parent domains, newest first."""
        async with self._db.read() as conn:
            return await self._repo.list_site_memories(
                conn, team_id, agent_id, host_and_parents(host), limit=limit
            )


def normalize_site(value: str) -> str:
    """A site as memories keep it: the lowercase host of a host name or an address, no ``www.``.

    Raises ``ToolFailure`` when ``value`` names no host.
    """
    text = value.strip()
    if "://" not in text:
        text = "https://" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        host = None
    site = _site_of_host(host or "")
    if site is None:
        raise ToolFailure(
            "invalidSite", "site must be a host such as example.com, or an address on it"
        )
    return site


def _site_of_host(host: str) -> str | None:
    host = host.lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    labels = host.split(".")
    if not all(_LABEL.match(label) for label in labels):
        return None
    if len(labels) < 2 and host != "localhost":
        return None
    return host


def host_and_parents(host: str) -> list[str]:
    """``app.example.com`` → ``app.example.com``, ``example.com``; an address stays alone."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        labels = host.split(".")
        return [".".join(labels[i:]) for i in range(max(1, len(labels) - 1))]
    return [host]


def page_site(url: str) -> str | None:
    """The site of a web page's address; None for anything but http(s)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https"):
        return None
    return _site_of_host(parts.hostname or "")


async def site_memories_for(
    context: ToolContext, url: str, *, secret: bool = False
) -> list[dict[str, Any]]:
    """Up to five of the agent's memories for the page at ``url``, once per host per turn.

    A tab that holds a secret (``secret``) shows none, and neither does a person's call.
    The host counts as shown for the rest of the turn, so call this for a snapshot that
    goes to the agent.
    """
    agent_id = context.caller.agent_id
    if context.memories is None or agent_id is None or secret:
        return []
    site = page_site(url)
    if site is None or site in context.turn.memory_hosts_shown:
        return []
    context.turn.memory_hosts_shown.add(site)
    found = await context.memories.memories_for_host(context.team_id, agent_id, site)
    return [{"site": memory.site, "text": memory.text} for memory in found]


class RememberArgs(ToolArgs):
    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MEMORY_CHARS)
    ] = Field(description="What to remember, in a sentence or two.")
    site: Annotated[str, StringConstraints(max_length=2048)] | None = Field(
        default=None,
        description=(
            "A host (example.com) or an address on it, when the memory is about how to "
            "work that site. It is then shown on that site's pages."
        ),
    )


async def remember(context: ToolContext, args: RememberArgs) -> dict[str, Any]:
    agent_id = context.caller.agent_id
    if agent_id is None:
        raise ToolFailure("agentsOnly", "only an agent keeps memories")
    if context.memories is None:
        raise ToolFailure("memoriesUnavailable", "memories are not available here")
    site = normalize_site(args.site) if args.site is not None else None
    memory = await context.memories.add_memory(context.team_id, agent_id, args.text, site)
    return {"remembered": True, "id": memory.id, "site": memory.site}


TOOLS = [
    Tool(
        name="remember",
        description=(
            "Keep a short memory for later turns. Give `site` for something about how to "
            "work one website (where a control is, a step that worked after one failed); "
            "it then comes back in `siteMemories` of a snapshot of that site. "
            "Never store passwords, codes or other secrets."
        ),
        args=RememberArgs,
        gated=False,
        run=remember,
    )
]
