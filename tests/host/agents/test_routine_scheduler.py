"""The firing of routines on an injected clock: restarts compute the next times from the
database, nothing is lost or doubled, daylight-saving changes in both directions, downtime
over several fire times, two schedulers over one database."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Sized
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from server.common.protocol.events import RoutineRunStarted
from server.db.engine import Database
from server.db.tables import routines as routines_table
from server.host.agents.routine_schedules import cron_schedule, every_schedule
from server.host.agents.routines import RoutineSpec
from server.host.storage.routines import RoutineRun
from tests.host.agents.routine_fixtures import AGENT, OWNER, Routines, TurnsByHand, routines_over
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.waiting import eventually

HOUR = 3600.0


def at(text: str) -> float:
    """An instant written in UTC, ``2027-03-27 12:00``."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC).timestamp()


@asynccontextmanager
async def host_life(
    database: ScratchDatabase, clock: FakeClock, turns: TurnsByHand | None = None
) -> AsyncIterator[Routines]:
    """One life of a host: its own connection to the database, its own service; leaving
    it is a shutdown."""
    db: Database = database.open()
    try:
        async with routines_over(db, clock, turns or TurnsByHand(auto_end="done")) as made:
            await made.service.recover()
            yield made
    finally:
        await db.close()


async def fire_until(routines: Routines, until: float) -> list[RoutineRun]:
    """What the loop does, without its sleeps: move the clock to each earliest due time
    (half a second late) and fire, until ``until``; each run ends before the next."""
    fired: list[RoutineRun] = []
    while True:
        earliest = await routines.service.earliest_fire()
        if earliest is None or earliest > until:
            break
        routines.clock.advance(earliest + 0.5 - routines.clock.now())
        runs = await routines.service.fire_due()
        assert runs, "a due routine fired nothing"
        fired += runs
        started = sum(1 for r in fired if r.status == "running")
        await eventually(functools.partial(_at_least, routines.finished, started))
    routines.clock.advance(max(0.0, until - routines.clock.now()))
    return fired


def _all_finished(lives: tuple[Routines, ...], count: int) -> bool:
    return sum(len(life.finished) for life in lives) >= count


def _at_least(items: Sized, count: int) -> bool:
    return len(items) >= count


def spec(schedule_name: str, schedule: object, **changes: object) -> RoutineSpec:
    values: dict[str, object] = {"name": schedule_name, "message": "Go.", "schedule": schedule}
    values.update(changes)
    return RoutineSpec(**values)  # type: ignore[arg-type]


def local(instants: list[float], zone: str) -> list[str]:
    tz = ZoneInfo(zone)
    return [datetime.fromtimestamp(t, tz).strftime("%m-%d %H:%M %Z") for t in instants]


DST_CASES = [
    # London springs forward at 01:00 UTC on 28 March 2027: 01:30 GMT does not exist.
    (
        "Europe/London",
        "30 1 * * *",
        "2027-03-26 12:00",
        ["03-27 01:30 GMT", "03-28 02:30 BST", "03-29 01:30 BST"],
    ),
    # London falls back at 01:00 UTC on 31 October 2027: 01:30 happens twice, fires once.
    (
        "Europe/London",
        "30 1 * * *",
        "2027-10-29 12:00",
        ["10-30 01:30 BST", "10-31 01:30 BST", "11-01 01:30 GMT"],
    ),
    # New York springs forward on 14 March 2027: 02:30 does not exist.
    (
        "America/New_York",
        "30 2 * * *",
        "2027-03-12 12:00",
        ["03-13 02:30 EST", "03-14 03:30 EDT", "03-15 02:30 EDT"],
    ),
    # New York falls back on 7 November 2027: 01:30 happens twice, fires once.
    (
        "America/New_York",
        "30 1 * * *",
        "2027-11-05 12:00",
        ["11-06 01:30 EDT", "11-07 01:30 EDT", "11-08 01:30 EST"],
    ),
]


@pytest.mark.parametrize(("zone", "cron", "start", "expected"), DST_CASES)
async def test_daylight_saving_changes_lose_and_double_nothing_across_restarts(
    database: ScratchDatabase, zone: str, cron: str, start: str, expected: list[str]
) -> None:
    clock = FakeClock(at(start))
    async with host_life(database, clock) as life:
        routine = await life.service.create_routine(
            OWNER, AGENT, spec("Daily", cron_schedule(cron, zone))
        )
        fired = await fire_until(life, at(start) + 36 * HOUR)
    # A restart in the middle of the change: the next times come from the database.
    async with host_life(database, clock) as life:
        fired += await fire_until(life, at(start) + 3 * 24 * HOUR)
        history = await life.service.history(OWNER, routine.id)
    assert local([r.due_at for r in fired if r.due_at], zone) == expected
    assert sorted(r.id for r in history) == sorted(r.id for r in fired)
    assert {r.status for r in history} == {"done"}


async def test_a_wildcard_hour_fires_in_both_passes_of_a_repeated_hour(
    database: ScratchDatabase,
) -> None:
    clock = FakeClock(at("2027-10-31 00:10"))
    async with host_life(database, clock) as life:
        await life.service.create_routine(
            OWNER, AGENT, spec("Half-hourly", cron_schedule("*/30 * * * *", "Europe/London"))
        )
        fired = await fire_until(life, at("2027-10-31 02:10"))
    assert local([r.due_at for r in fired if r.due_at], "Europe/London") == [
        "10-31 01:30 BST",
        "10-31 01:00 GMT",
        "10-31 01:30 GMT",
        "10-31 02:00 GMT",
    ]


@pytest.mark.parametrize(("missed", "runs"), [("once", 1), ("skip", 0)])
async def test_downtime_over_several_fire_times_follows_the_missed_run_policy(
    database: ScratchDatabase, missed: str, runs: int
) -> None:
    start = at("2027-01-04 08:00")
    clock = FakeClock(start)
    async with host_life(database, clock) as life:
        routine = await life.service.create_routine(
            OWNER, AGENT, spec("Hourly", every_schedule(int(HOUR), start), missed=missed)
        )
    # Down for five hours and ten minutes: five fire times pass, the last ten minutes ago.
    clock.advance(5 * HOUR + 600)
    async with host_life(database, clock) as life:
        fired = await life.service.fire_due()
        await eventually(lambda: len(life.finished) == len(fired))
        assert await life.service.fire_due() == []
        [stored] = await life.service.list_routines(OWNER, AGENT)
        history = await life.service.history(OWNER, routine.id)
    assert len(fired) == len(history) == runs
    if runs:
        assert fired[0].due_at == start + HOUR
        assert history[0].status == "done"
    # Either way the next time is the first after now.
    assert stored.next_fire_at == start + 6 * HOUR


async def test_a_fire_time_reached_late_but_within_a_minute_runs(database: ScratchDatabase) -> None:
    start = at("2027-01-04 08:00")
    clock = FakeClock(start)
    async with host_life(database, clock) as life:
        await life.service.create_routine(
            OWNER, AGENT, spec("Hourly", every_schedule(int(HOUR), start), missed="skip")
        )
        clock.advance(HOUR + 45)
        [run] = await life.service.fire_due()
    assert run.due_at == start + HOUR


async def test_two_schedulers_over_one_database_fire_a_time_once(
    database: ScratchDatabase,
) -> None:
    start = at("2027-01-04 08:00")
    clock = FakeClock(start)
    async with host_life(database, clock) as one, host_life(database, clock) as other:
        for n in range(5):
            await one.service.create_routine(
                OWNER, AGENT, spec(f"R{n}", every_schedule(int(HOUR), start))
            )
        # Several rounds: which one reads first, and when, varies from round to round.
        for hour in range(1, 6):
            clock.advance(start + hour * HOUR + 1 - clock.now())
            first, second = await asyncio.gather(one.service.fire_due(), other.service.fire_due())
            assert len(first) + len(second) == 5
            assert {r.routine_id for r in first}.isdisjoint({r.routine_id for r in second})
            assert {r.status for r in first + second} == {"running"}
            await eventually(functools.partial(_all_finished, (one, other), 5 * hour))


async def test_a_run_under_way_at_shutdown_ends_interrupted_and_the_queued_one_starts(
    database: ScratchDatabase,
) -> None:
    clock = FakeClock(at("2027-01-04 08:00"))
    turns = TurnsByHand()
    async with host_life(database, clock, turns) as life:
        routine = await life.service.create_routine(
            OWNER, AGENT, spec("Q", every_schedule(int(HOUR), clock.now()), overlap="queue")
        )
        first = await life.service.run_now(OWNER, routine.id)
        waiting = await life.service.run_now(OWNER, routine.id)
        await eventually(lambda: len(turns.started) == 1)
    # The host stopped with one run under way and one waiting.
    after = TurnsByHand(auto_end="done")
    async with host_life(database, clock, after) as life:
        await eventually(lambda: len(life.finished) == 2)
        runs = {r.id: r for r in await life.service.history(OWNER, routine.id)}
    assert runs[first.id].status == "interrupted"
    assert runs[first.id].reason == "the host stopped during the run"
    assert runs[waiting.id].status == "done"
    assert len(after.started) == 1


async def test_a_run_whose_turn_the_next_start_takes_up_is_followed_to_its_end(
    database: ScratchDatabase,
) -> None:
    clock = FakeClock(at("2027-01-04 08:00"))
    turns = TurnsByHand()
    async with host_life(database, clock, turns) as life:
        routine = await life.service.create_routine(
            OWNER, AGENT, spec("Q", every_schedule(int(HOUR), clock.now()), overlap="queue")
        )
        run = await life.service.run_now(OWNER, routine.id)
        waiting = await life.service.run_now(OWNER, routine.id)
        await eventually(lambda: len(turns.started) == 1)
        turn_id = turns.started[0].turn.id
        # The run records its turn as its follow begins.
        await eventually(lambda: any(isinstance(e, RoutineRunStarted) for e, _ in life.announced))
    # The host stopped while the run's turn waited for consent; the next start takes it up.
    ends: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    after = TurnsByHand(auto_end="done", taken_up={turn_id: ends})
    async with host_life(database, clock, after) as life:
        runs = {r.id: r for r in await life.service.history(OWNER, routine.id)}
        assert (runs[run.id].status, runs[waiting.id].status) == ("running", "queued")
        assert after.started == []
        ends.set_result("done")
        await eventually(lambda: len(life.finished) == 2)
        runs = {r.id: r for r in await life.service.history(OWNER, routine.id)}
    assert (runs[run.id].status, runs[run.id].turn_id) == ("done", turn_id)
    assert runs[waiting.id].status == "done"
    assert len(after.started) == 1


async def test_a_disabled_routine_does_not_fire_and_turned_on_fires_from_now(
    database: ScratchDatabase,
) -> None:
    start = at("2027-01-04 08:00")
    clock = FakeClock(start)
    async with host_life(database, clock) as life:
        hourly = spec("H", every_schedule(int(HOUR), start))
        routine = await life.service.create_routine(OWNER, AGENT, hourly)
        await life.service.update_routine(
            OWNER, routine.id, spec("H", hourly.schedule, enabled=False)
        )
        clock.advance(3 * HOUR + 10)
        assert await life.service.fire_due() == []
        back = await life.service.update_routine(OWNER, routine.id, hourly)
        assert back.next_fire_at == start + 4 * HOUR
        assert await life.service.fire_due() == []


async def test_the_loop_fires_a_routine_made_while_it_sleeps(database: ScratchDatabase) -> None:
    """The real loop on the real clock: a routine due now is fired once, promptly."""
    db = database.open()
    clock = FakeClock()
    try:
        async with routines_over(db, clock, TurnsByHand(auto_end="done")) as life:
            await life.scheduler.start()
            await life.service.create_routine(
                OWNER, AGENT, spec("Once", cron_schedule("* * * * *", "UTC"))
            )
            # The schedule fires at the next whole minute: go there.
            [stored] = await life.service.list_routines(OWNER, AGENT)
            assert stored.next_fire_at is not None
            clock.advance(stored.next_fire_at - clock.now())
            life.service.schedule_changed.set()
            await eventually(lambda: len(life.finished) == 1)
            assert len(life.due) == 1
            assert life.due[0].due_at == stored.next_fire_at
    finally:
        await db.close()


async def test_a_routine_whose_schedule_no_longer_reads_stops_alone(
    database: ScratchDatabase,
) -> None:
    start = at("2027-01-04 08:00")
    clock = FakeClock(start)
    db = database.open()
    try:
        async with routines_over(db, clock, TurnsByHand(auto_end="done")) as life:
            hourly = await life.service.create_routine(
                OWNER, AGENT, spec("Hourly", every_schedule(int(HOUR), start))
            )
            broken = await life.service.create_routine(
                OWNER, AGENT, spec("Broken", cron_schedule("30 8 * * *", "UTC"))
            )
            # A zone this host's zone data no longer has (the data changed under it).
            stored = {**broken.schedule, "time_zone": "Gone/Zone"}
            async with db.write() as conn:
                await conn.execute(
                    routines_table.update()
                    .where(routines_table.c.id == broken.id)
                    .values(schedule=json.dumps(stored))
                )
            clock.advance(HOUR + 1)
            fired = await life.service.fire_due()
            assert [r.routine_id for r in fired] == [hourly.id]
            await eventually(functools.partial(_at_least, life.finished, 2))
            [failed] = await life.service.history(OWNER, broken.id)
            assert failed.status == "error"
            assert failed.reason is not None
            assert "ZoneInfoNotFoundError" in failed.reason
            assert (await life.service.get_routine(OWNER, broken.id)).next_fire_at is None
            assert sorted(f.status for f in life.finished) == ["done", "error"]
            # The next pass fires the rest again, the broken one no more.
            clock.advance(HOUR)
            assert [r.routine_id for r in await life.service.fire_due()] == [hourly.id]
    finally:
        await db.close()
