"""A turn's memory block: essential memories first and always, then the others in order
while they fit in the budget, secrets blanked, and a line saying how many were left out;
read from a real database of each backend, counting uses in a write the turn does not
wait on."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa

from server.db.tables import agent_memories
from server.host.services.memories import (
    CHARS_PER_TOKEN,
    LINE_TOKENS,
    MEMORY_BLOCK_HEADER,
    MemoryService,
    memory_block,
)
from server.host.storage.memories import PromptMemory
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase


def memory(n: int, chars: int = 200, *, pinned: bool = False) -> PromptMemory:
    return PromptMemory(f"m{n}", f"note {n} " + "x" * chars, pinned)


def test_memories_fill_the_budget_in_order_and_the_rest_are_counted() -> None:
    candidates = [memory(n) for n in range(40)]
    block = memory_block(candidates, budget_tokens=500)
    # The header's tokens, then each memory's: its characters over four and its line's two.
    each = len(candidates[0].text) // CHARS_PER_TOKEN + LINE_TOKENS
    fits = (500 - len(MEMORY_BLOCK_HEADER) // CHARS_PER_TOKEN) // each
    assert 1 < fits < 40
    assert block.shown == tuple(f"m{n}" for n in range(fits))
    assert block.left_out == 40 - fits
    assert block.text.startswith(MEMORY_BLOCK_HEADER)
    assert block.text.endswith(
        f"({40 - fits} older or less used memories were left out to save room.)"
    )


def test_essential_memories_always_go_and_secrets_are_blanked() -> None:
    candidates = [
        PromptMemory("p1", "essential: the api key: sk-live-0042abc is in the vault", True),
        memory(1, 4000),
        PromptMemory("m2", "short one", False),
    ]
    block = memory_block(candidates, budget_tokens=80)
    assert block.shown == ("p1", "m2")
    assert "sk-live-0042abc" not in block.text
    assert block.left_out == 1
    assert memory_block(candidates, budget_tokens=0).shown == ("p1",)


def test_no_memory_no_block() -> None:
    assert memory_block([], 2000).text == ""


async def test_a_turns_block_from_the_database_does_not_wait_on_counting_uses(
    database: ScratchDatabase,
) -> None:
    db = database.open()
    await db.migrate()
    try:
        service = MemoryService(db, FakeClock())
        team, agent = "team-block", "agent-block"
        await service.add_memory(team, agent, "Always " + "book the aisle " * 100, None)
        kept = await service.add_memory(team, agent, "The password is hunter22x", None)
        await service.add_memory(team, agent, "On its own site", "example.com")
        await service.add_memory("team-other", agent, "Another team's memory", None)
        # Another write holds the table while the turn asks: the turn still gets its block.
        async with db.write() as conn:
            await conn.execute(
                agent_memories.update()
                .where(agent_memories.c.team_id == team)
                .values(uses=agent_memories.c.uses)
            )
            async with asyncio.timeout(60):  # a hang, not a measure
                block = await service.prompt_block(team, agent, None, budget_tokens=60)
        assert block.shown == (kept.id,)
        assert block.left_out == 1
        assert "The password is [redacted]" in block.text
        assert "site" not in block.text
        assert "Another team" not in block.text
        await service.uses_counted()
        async with db.read() as conn:
            rows = await conn.execute(sa.select(agent_memories.c.text, agent_memories.c.uses))
            uses = {row.text: row.uses for row in rows}
        assert uses == {
            "Always " + "book the aisle " * 100: 0,
            kept.text: 1,
            "On its own site": 0,
            "Another team's memory": 0,
        }
    finally:
        await db.close()
