"""The rows a turn's memory block is chosen from are read once and kept: a write of any of
the agent's memories is in the next block, counted uses keep the database's order, and a
read that a write overtook is never kept."""

from __future__ import annotations

from server.common.roles import Role
from server.host.services.memories import MemoryService
from server.host.services.prompt_memories import PromptRow, PromptRows
from server.host.services.workspace import Member
from server.host.storage.memories import AgentMemoryRepository
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase

TEAM, AGENT = "team-kept", "agent-kept"


async def test_kept_rows_follow_every_write_and_keep_the_databases_order(
    database: ScratchDatabase,
) -> None:
    db = database.open()
    await db.migrate()
    clock = FakeClock()
    try:
        service = MemoryService(db, clock)
        added = [
            await service.add_memory(TEAM, AGENT, f"note {n} " + "x" * 60, None) for n in range(6)
        ]
        budget = 60  # room for about two of them

        async def block() -> tuple[str, ...]:
            shown = (await service.prompt_block(TEAM, AGENT, None, budget)).shown
            await service.uses_counted()
            clock.advance(1)
            return shown

        async def database_order() -> list[str]:
            async with db.read() as conn:
                rows = await AgentMemoryRepository().list_prompt_memories(conn, TEAM, AGENT, None)
            return [row.id for row in rows]

        for _ in range(4):
            await block()
            assert [row.id for row in service._prompt_rows.get(TEAM, AGENT) or []] == (
                await database_order()
            ), "the kept rows are in the order the database gives"

        # A person writes: the next block reads what they wrote.
        owner = Member(TEAM, "acct-owner", Role.OWNER)
        await service.pin_memory(owner, AGENT, added[5].id, True)
        assert (await block())[0] == added[5].id
        await service.edit_memory(owner, AGENT, added[5].id, "moved to a site", "example.com")
        assert added[5].id not in await block()
        await service.delete_memory(owner, AGENT, added[0].id)
        fresh = await service.add_memory(TEAM, AGENT, "the newest note", None)
        shown = await block()
        assert added[0].id not in shown
        assert fresh.id in shown, "a memory kept after the rows were read is in the next block"
        assert [row.id for row in service._prompt_rows.get(TEAM, AGENT) or []] == (
            await database_order()
        )
        await service.remove_agent_memories(TEAM, AGENT)  # the agent is deleted
        assert await block() == ()
    finally:
        await db.close()


async def test_a_members_memories_go_only_in_their_turns(database: ScratchDatabase) -> None:
    db = database.open()
    await db.migrate()
    try:
        service = MemoryService(db, FakeClock())
        team = await service.add_memory(TEAM, AGENT, "the team's note", None)
        own = await service.add_memory(TEAM, AGENT, "ria's note", None, member_id="acct-ria")
        assert (await service.prompt_block(TEAM, AGENT, None, 2000)).shown == (team.id,)
        ria = await service.prompt_block(TEAM, AGENT, "acct-ria", 2000)
        assert set(ria.shown) == {team.id, own.id}
        sam = await service.prompt_block(TEAM, AGENT, "acct-sam", 2000)
        assert sam.shown == (team.id,)
        await service.uses_counted()
    finally:
        await db.close()


def row(memory_id: str, active_at: float | None = 1.0, uses: int = 0) -> PromptRow:
    return PromptRow(memory_id, "text", False, active_at, uses, None)


def test_a_read_that_a_write_overtook_is_not_kept() -> None:
    rows = PromptRows()
    read_at = rows.generation
    rows.forget(TEAM, "another-agent")  # a write ends while the read is under way
    rows.keep(TEAM, AGENT, [row("a")], read_at)
    assert rows.get(TEAM, AGENT) is None
    rows.keep(TEAM, AGENT, [row("a")], rows.generation)
    assert rows.get(TEAM, AGENT) is not None


def test_uses_reorder_the_rows_and_the_least_recent_agent_goes_first() -> None:
    rows = PromptRows(kept_agents=2)
    rows.keep(TEAM, "one", [row("b", 5.0), row("a", 4.0), row("c", None)], rows.generation)
    rows.used(TEAM, ["c"], now=9.0)
    assert [r.id for r in rows.get(TEAM, "one") or []] == ["c", "b", "a"]
    rows.used("another-team", ["a"], now=10.0)
    assert [r.id for r in rows.get(TEAM, "one") or []] == ["c", "b", "a"]
    rows.keep(TEAM, "two", [row("d")], rows.generation)
    rows.get(TEAM, "one")
    rows.keep(TEAM, "three", [row("e")], rows.generation)
    assert rows.get(TEAM, "two") is None, "the least recently used agent's rows went"
    assert rows.get(TEAM, "one") is not None
