"""Learn from my browsing, in storage: off by default, the newest 80 per agent, expiry after
30 days, deleted when read, when the setting goes off and with the agent; per team."""

from __future__ import annotations

from server.db.engine import Database
from server.host.services.browsing_steps import (
    MAX_STEPS_PER_AGENT,
    STEP_DAYS,
    BrowsingStepService,
)
from tests.support.clock import FakeClock

TEAM, OTHER = "team-a", "team-b"


async def test_nothing_is_kept_until_the_team_turns_it_on(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    assert await steps.is_enabled(TEAM) is False
    assert await steps.record(TEAM, "agent", "opened example.com/") is False
    assert await steps.steps_for_review(TEAM, "agent") == []
    await steps.set_enabled(TEAM, True)
    assert await steps.is_enabled(TEAM) is True
    assert await steps.is_enabled(OTHER) is False
    assert await steps.record(TEAM, "agent", "opened example.com/") is True
    assert [line for _, line in await steps.steps_for_review(TEAM, "agent")] == [
        "opened example.com/"
    ]


async def test_an_agent_keeps_its_newest_steps(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    for n in range(MAX_STEPS_PER_AGENT + 5):
        await steps.record(TEAM, "agent", f'pressed button "Step {n}"')
    kept = [line for _, line in await steps.steps_for_review(TEAM, "agent")]
    assert len(kept) == MAX_STEPS_PER_AGENT
    assert kept[0] == 'pressed button "Step 5"'
    assert kept[-1] == f'pressed button "Step {MAX_STEPS_PER_AGENT + 4}"'


async def test_unread_steps_expire(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    await steps.record(TEAM, "agent", "opened old.example.com/")
    clock.advance(STEP_DAYS * 86_400 - 60)
    await steps.record(TEAM, "agent", "opened new.example.com/")
    clock.advance(120)
    assert [line for _, line in await steps.steps_for_review(TEAM, "agent")] == [
        "opened new.example.com/"
    ]


async def test_steps_read_are_deleted_and_others_stay(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    await steps.record(TEAM, "agent", "opened a.example.com/")
    read = await steps.steps_for_review(TEAM, "agent")
    await steps.record(TEAM, "agent", "opened b.example.com/")
    await steps.remove_read_steps(TEAM, "agent", [step_id for step_id, _ in read])
    assert [line for _, line in await steps.steps_for_review(TEAM, "agent")] == [
        "opened b.example.com/"
    ]


async def test_turning_it_off_or_deleting_the_agent_deletes_steps(
    db: Database, clock: FakeClock
) -> None:
    steps = BrowsingStepService(db, clock)
    for team in (TEAM, OTHER):
        await steps.set_enabled(team, True)
        for agent in ("one", "two"):
            await steps.record(team, agent, f"opened {agent}.example.com/")
    await steps.remove_agent_steps(TEAM, "one")
    assert await steps.steps_for_review(TEAM, "one") == []
    assert len(await steps.steps_for_review(TEAM, "two")) == 1
    await steps.set_enabled(TEAM, False)
    assert await steps.steps_for_review(TEAM, "two") == []
    # Another team's steps are its own.
    assert len(await steps.steps_for_review(OTHER, "one")) == 1
    await steps.set_enabled(TEAM, True)
    assert await steps.steps_for_review(TEAM, "two") == []


async def test_a_step_that_looks_like_a_secret_is_blanked(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    await steps.record(TEAM, "agent", 'opened shop.example.com/pay "Card 4111 1111 1111 1111"')
    [(_, line)] = await steps.steps_for_review(TEAM, "agent")
    assert "4111" not in line
