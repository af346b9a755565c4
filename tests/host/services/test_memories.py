"""A turn's memory block: essential memories first and always, then the others in order
while they fit in the budget, secrets blanked, and a line saying how many were left out."""

from __future__ import annotations

from server.host.services.memories import (
    CHARS_PER_TOKEN,
    LINE_TOKENS,
    MEMORY_BLOCK_HEADER,
    memory_block,
)
from server.host.storage.memories import PromptMemory


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
