"""The agents' memories, and the site rules that tie a memory to the pages it is about.

A memory tied to a site (a host without ``www.``) belongs to that site and its
subdomains; the ``remember`` tool writes them and a snapshot shows them.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from urllib.parse import urlsplit

from server.common.clock import Clock
from server.common.errors import Conflict, InvalidArgument
from server.common.redaction import redact
from server.db.engine import Database
from server.host.storage.memories import AgentMemory, AgentMemoryRepository

MAX_MEMORY_CHARS = 2000
MAX_MEMORIES_PER_AGENT = 1000
SITE_MEMORIES_SHOWN = 5

_LABEL = re.compile(r"^(?!-)[a-z0-9\-_]{1,63}(?<!-)$")


class MemoryService:
    """The agents' memories of one host's teams, in the host's database."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock
        self._repo = AgentMemoryRepository()

    async def add_memory(
        self, team_id: str, agent_id: str, text: str, site: str | None
    ) -> AgentMemory:
        """Keeps one memory, secrets blanked; refuses when the agent already holds the most
        it may."""
        memory = AgentMemory(
            uuid.uuid4().hex, team_id, agent_id, site, redact(text), self._clock.now()
        )
        async with self._db.write() as conn:
            if await self._repo.count_memories(conn, team_id, agent_id) >= MAX_MEMORIES_PER_AGENT:
                raise Conflict(
                    f"this agent already keeps {MAX_MEMORIES_PER_AGENT} memories; "
                    "ask a person to remove old ones",
                    code="memoryLimit",
                )
            await self._repo.add_memory(conn, memory)
        return memory

    async def update_memory(self, memory: AgentMemory, text: str, site: str | None) -> bool:
        """Rewrites one of the agent's memories, secrets blanked; False when it is gone."""
        async with self._db.write() as conn:
            return await self._repo.update_memory(
                conn, memory.team_id, memory.id, text=redact(text), site=site
            )

    async def remove_agent_memories(self, team_id: str, agent_id: str) -> None:
        """Forget every memory of an agent (the agent is being deleted)."""
        async with self._db.write() as conn:
            await self._repo.remove_agent_memories(conn, team_id, agent_id)

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

    Raises ``invalidSite`` when ``value`` names no host.
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
        raise InvalidArgument(
            "site must be a host such as example.com, or an address on it",
            code="invalidSite",
            field="site",
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
