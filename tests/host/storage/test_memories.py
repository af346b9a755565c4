"""The agent memory repository on both databases: newest first, per site, never across teams."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.db.engine import Database
from server.host.storage.memories import AgentMemory, AgentMemoryRepository
from tests.support.databases import ScratchDatabase

repo = AgentMemoryRepository()
TEAM_A, TEAM_B = "a" * 32, "b" * 32
AGENT, OTHER_AGENT = "c" * 32, "d" * 32


def memory(n: int, *, team: str = TEAM_A, agent: str = AGENT, site: str | None) -> AgentMemory:
    return AgentMemory(f"{n:032d}", team, agent, site, f"memory {n}", 1000.0 + n)


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    async with opened.write() as conn:
        for item in (
            memory(1, site="example.com"),
            memory(2, site="app.example.com"),
            memory(3, site=None),
            memory(4, site="example.com"),
            memory(5, site="other.test"),
            memory(6, agent=OTHER_AGENT, site="example.com"),
            memory(7, team=TEAM_B, site="example.com"),
        ):
            await repo.add_memory(conn, item)
    yield opened
    await opened.close()


def texts(found: list[AgentMemory]) -> list[str]:
    return [m.text for m in found]


async def test_site_memories_are_newest_first_for_the_sites_asked(db: Database) -> None:
    async with db.read() as conn:
        found = await repo.list_site_memories(
            conn, TEAM_A, AGENT, ["app.example.com", "example.com"], limit=5
        )
        assert texts(found) == ["memory 4", "memory 2", "memory 1"]
        limited = await repo.list_site_memories(conn, TEAM_A, AGENT, ["example.com"], limit=1)
        assert texts(limited) == ["memory 4"]
        assert await repo.list_site_memories(conn, TEAM_A, AGENT, [], limit=5) == []


async def test_reads_filter_by_team_and_agent(db: Database) -> None:
    async with db.read() as conn:
        assert texts(await repo.list_memories(conn, TEAM_B, AGENT)) == ["memory 7"]
        assert texts(await repo.list_memories(conn, TEAM_A, OTHER_AGENT)) == ["memory 6"]
        assert await repo.count_memories(conn, TEAM_A, AGENT) == 5
        assert await repo.list_memories(conn, TEAM_B, OTHER_AGENT) == []


async def test_removal_needs_the_right_team(db: Database) -> None:
    async with db.write() as conn:
        assert not await repo.remove_memory(conn, TEAM_B, f"{1:032d}")
        assert await repo.remove_memory(conn, TEAM_A, f"{1:032d}")
        await repo.remove_agent_memories(conn, TEAM_B, AGENT)
    async with db.read() as conn:
        assert texts(await repo.list_memories(conn, TEAM_A, AGENT)) == [
            "memory 5",
            "memory 4",
            "memory 3",
            "memory 2",
        ]
        assert await repo.list_memories(conn, TEAM_B, AGENT) == []
