"""Learn from my browsing, in storage: off by default, the newest 80 per agent, expiry after
30 days, deleted when read, when the setting goes off and with the agent; per team; a step in
a private thread's tab is its member's."""

from __future__ import annotations

from server.db.engine import Database
from server.host.rtc.revocations import MemberRemoved
from server.host.services.browsing_steps import (
    MAX_STEPS_PER_AGENT,
    STEP_DAYS,
    BrowsingStepService,
)
from server.host.storage.threads import Thread, ThreadRepository
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
    assert [step.line for step in await steps.steps_for_review(TEAM, "agent")] == [
        "opened example.com/"
    ]


async def test_an_agent_keeps_its_newest_steps(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    for n in range(MAX_STEPS_PER_AGENT + 5):
        await steps.record(TEAM, "agent", f'pressed button "Step {n}"')
    kept = [step.line for step in await steps.steps_for_review(TEAM, "agent")]
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
    assert [step.line for step in await steps.steps_for_review(TEAM, "agent")] == [
        "opened new.example.com/"
    ]


async def test_steps_read_are_deleted_and_others_stay(db: Database, clock: FakeClock) -> None:
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    await steps.record(TEAM, "agent", "opened a.example.com/")
    read = await steps.steps_for_review(TEAM, "agent")
    await steps.record(TEAM, "agent", "opened b.example.com/")
    await steps.remove_read_steps(TEAM, "agent", [step.id for step in read])
    assert [step.line for step in await steps.steps_for_review(TEAM, "agent")] == [
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
    [step] = await steps.steps_for_review(TEAM, "agent")
    assert "4111" not in step.line


async def test_a_step_in_a_private_threads_tab_is_its_members(
    db: Database, clock: FakeClock
) -> None:
    async with db.write() as conn:
        for team, thread_id, shared in ((TEAM, "private", False), (TEAM, "shared", True)):
            thread = Thread(thread_id, team, "agent", "acct-ada", shared, "T", 0.0, 0.0)
            await ThreadRepository().add_thread(conn, thread)
        # The same thread id in another team is not this team's thread.
        await ThreadRepository().add_thread(
            conn, Thread("theirs", OTHER, "agent", "acct-bo", False, "T", 0.0, 0.0)
        )
    steps = BrowsingStepService(db, clock)
    await steps.set_enabled(TEAM, True)
    assert await steps.record(TEAM, "agent", "opened ada.example.com/", thread_id="private")
    assert await steps.record(TEAM, "agent", "opened team.example.com/", thread_id="shared")
    assert await steps.record(TEAM, "agent", "opened any.example.com/")
    # A thread that is gone (or another team's) leaves the step's privacy unknown: not kept.
    assert not await steps.record(TEAM, "agent", "opened gone.example.com/", thread_id="gone")
    assert not await steps.record(TEAM, "agent", "opened bo.example.com/", thread_id="theirs")
    kept = await steps.steps_for_review(TEAM, "agent")
    assert {step.line: step.member_id for step in kept} == {
        "opened ada.example.com/": "acct-ada",
        "opened team.example.com/": None,
        "opened any.example.com/": None,
    }
    # Ada leaves the team: no review makes memories of her steps for someone who left.
    await steps.member_removed(MemberRemoved(TEAM, "acct-ada"))
    left = await steps.steps_for_review(TEAM, "agent")
    assert {step.line for step in left} == {"opened team.example.com/", "opened any.example.com/"}
