"""The places of each team's running turns: first come first served within a team, teams
apart, and a turn stopped while it waits (or just as it is handed a place) losing nobody
their place."""

from __future__ import annotations

import asyncio

from server.host.agents.turn_slots import TurnSlots


async def holder(
    slots: TurnSlots, team: str, name: str, order: list[str], release: asyncio.Event
) -> None:
    async with slots.place(team, lambda ahead: order.append(f"{name} waits ({ahead} ahead)")):
        order.append(f"{name} runs")
        await release.wait()
    order.append(f"{name} ends")


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_turns_past_the_places_wait_in_order_and_other_teams_do_not() -> None:
    slots = TurnSlots(2)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in "abcde"}
    tasks = {
        name: asyncio.create_task(holder(slots, team, name, order, gates[name]))
        for name, team in (("a", "t1"), ("b", "t1"), ("c", "t1"), ("d", "t1"), ("e", "t2"))
    }
    await settle()
    assert order == ["a runs", "b runs", "c waits (0 ahead)", "d waits (1 ahead)", "e runs"]
    assert (slots.waiting("t1"), slots.waiting("t2"), slots.waiting()) == (2, 0, 2)
    assert (slots.running("t1"), slots.running("t2")) == (2, 1)
    order.clear()
    gates["b"].set()
    await settle()
    assert order == ["b ends", "c runs"]
    for name in "acde":
        gates[name].set()
    await asyncio.gather(*tasks.values())
    assert slots.waiting() == 0
    assert slots.running("t1") == 0
    assert slots.running("t2") == 0


async def test_a_turn_stopped_while_it_waits_gives_up_its_turn_not_a_place() -> None:
    slots = TurnSlots(1)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in "abc"}
    tasks = {
        name: asyncio.create_task(holder(slots, "t", name, order, gates[name])) for name in "abc"
    }
    await settle()
    tasks["b"].cancel()
    await settle()
    assert slots.waiting("t") == 1
    order.clear()
    gates["a"].set()
    await settle()
    assert order == ["a ends", "c runs"]
    gates["c"].set()
    await tasks["c"]
    assert tasks["b"].cancelled()
    assert slots.running("t") == 0


async def test_a_turn_stopped_as_it_is_handed_a_place_passes_it_on() -> None:
    slots = TurnSlots(1)
    order: list[str] = []
    gates = {name: asyncio.Event() for name in "bc"}
    tasks: dict[str, asyncio.Task[None]] = {}

    async def first() -> None:
        async with slots.place("t"):
            await settle()
        # The place is b's now, and b has not run yet: it is stopped at this moment.
        tasks["b"].cancel()

    tasks["a"] = asyncio.create_task(first())
    await asyncio.sleep(0)
    for name in "bc":
        tasks[name] = asyncio.create_task(holder(slots, "t", name, order, gates[name]))
    await tasks["a"]
    await settle()
    assert tasks["b"].cancelled()
    assert "b runs" not in order
    assert "c runs" in order
    gates["c"].set()
    await tasks["c"]
    assert slots.running("t") == 0
    assert slots.waiting("t") == 0


async def test_no_limit_never_waits() -> None:
    slots = TurnSlots(0)
    order: list[str] = []
    release = asyncio.Event()
    tasks = [asyncio.create_task(holder(slots, "t", str(n), order, release)) for n in range(50)]
    await settle()
    assert order.count("0 runs") == 1
    assert sum("runs" in o for o in order) == 50
    release.set()
    await asyncio.gather(*tasks)
