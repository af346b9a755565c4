"""Usage over a real database (SQLite and PostgreSQL): requests recorded with their cost,
reports summed from the rollups in the team's time zone, who reads what, CSV escaping."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

import genai_prices
import pytest
import sqlalchemy as sa
from prometheus_client import generate_latest

from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.roles import Role
from server.db.engine import Database
from server.db.tables import model_requests, usage_rollups
from server.host.agents import budgets as budgets_module
from server.host.agents.budgets import BudgetService, BudgetSpec, BudgetState, Spender
from server.host.agents.providers.events import Usage
from server.host.agents.usage import RequestFor, UsageService, report_csv, safe_cell
from server.host.agents.usage_meter import ASSUMED_OUTPUT_TOKENS, UsageMeters
from server.host.agents.usage_prices import Tokens, listed_cost, to_micros
from server.host.agents.work_signals import BudgetReached
from server.host.metrics import HostMetrics
from server.host.services.workspace import Member
from server.host.signals import Signals
from server.host.storage.usage import BudgetRow
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase

TEAM = "t" * 32
OTHER_TEAM = "u" * 32
AGENT = "a" * 32
OWNER = Member(TEAM, "o" * 32, Role.OWNER)
ALICE = Member(TEAM, "1" * 32, Role.MEMBER)
BOB = Member(TEAM, "2" * 32, Role.MEMBER)
STRANGER = Member(OTHER_TEAM, "3" * 32, Role.OWNER)


def at(text: str) -> float:
    """A UTC moment written as ``YYYY-MM-DD HH:MM``."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def request_for(
    member: Member, *, model: str = "house-model", provider: str = "custom-x", routine: str = ""
) -> RequestFor:
    return RequestFor(
        team_id=member.team_id,
        agent_id=AGENT,
        thread_id="h" * 32,
        turn_id="n" * 32,
        account_id="" if routine else member.account_id,
        routine_id=routine,
        provider_id=provider,
        model=model,
    )


@dataclass
class World:
    db: Database
    clock: FakeClock
    usage: UsageService
    metrics: HostMetrics

    async def record_at(self, when: float, who: RequestFor, tokens: Tokens) -> None:
        self.clock.advance(when - self.clock.now())
        await self.usage.record(who, tokens, 0.25, ok=True)


@pytest.fixture
async def world(database: ScratchDatabase, clock: FakeClock) -> AsyncIterator[World]:
    db = database.open()
    metrics = HostMetrics()
    try:
        yield World(db, clock, UsageService(db, clock, metrics), metrics)
    finally:
        await db.close()


async def test_sums_are_exact_across_a_zones_month_boundary_and_dst(world: World) -> None:
    # New York leaves summer time on 2026-11-01 at 06:00 UTC (02:00 EDT becomes 01:00 EST).
    await world.usage.set_settings(TEAM, "America/New_York", "USD", "1")
    who = request_for(ALICE)
    moments = {
        "2026-10-01 03:59": "2026-09-30",  # 23:59 EDT
        "2026-10-01 04:00": "2026-10-01",  # 00:00 EDT
        "2026-11-01 03:30": "2026-10-31",  # 23:30 EDT
        "2026-11-01 04:30": "2026-11-01",  # 00:30 EDT
        "2026-11-01 06:30": "2026-11-01",  # 01:30 EST, after the change
        "2026-11-02 04:30": "2026-11-01",  # 23:30 EST: the 25-hour day's last hour
        "2026-11-02 05:00": "2026-11-02",  # 00:00 EST
    }
    for n, moment in enumerate(moments, start=1):
        await world.record_at(at(moment), who, Tokens(input=n, output=10 * n))
    report = await world.usage.summary(OWNER, "2026-10-01", "2026-10-31", [])
    [october] = report.totals
    assert (october.requests, october.input_tokens, october.output_tokens) == (2, 2 + 3, 50)
    november = await world.usage.summary(OWNER, "2026-11-01", "2026-11-30", ["day"])
    assert [(t.key["day"], t.input_tokens) for t in november.totals] == [
        ("2026-11-01", 4 + 5 + 6),
        ("2026-11-02", 7),
    ]
    # The rollups hold what the requests hold: no report reads the requests.
    async with world.db.read() as conn:
        raw = (await conn.execute(sa.select(sa.func.sum(model_requests.c.input_tokens)))).one()
        rolled = (await conn.execute(sa.select(sa.func.sum(usage_rollups.c.input_tokens)))).one()
    assert raw[0] == rolled[0] == sum(range(1, 8))
    # Counted in UTC instead, the same requests fall on other days, recounted exactly.
    await world.usage.set_settings(TEAM, "UTC", "USD", "1")
    utc = await world.usage.summary(OWNER, "2026-11-01", "2026-11-30", ["day"])
    assert [(t.key["day"], t.input_tokens) for t in utc.totals] == [
        ("2026-11-01", 3 + 4 + 5),
        ("2026-11-02", 6 + 7),
    ]


async def test_a_listed_price_is_the_one_in_force_on_the_requests_date(world: World) -> None:
    # genai-prices lists o3 at $10/$40 per million until 2025-06-10, then $2/$8.
    who = request_for(ALICE, provider="openai", model="o3")
    tokens = Tokens(input=1_000_000, output=1_000_000)
    await world.record_at(at("2025-06-09 12:00"), who, tokens)
    await world.record_at(at("2025-06-11 12:00"), who, tokens)
    report = await world.usage.summary(OWNER, "2025-06-01", "2025-06-30", ["day"])
    assert [t.cost_micros for t in report.totals] == [50_000_000, 10_000_000]
    [whole] = (await world.usage.summary(OWNER, "2025-06-01", "2025-06-30", [])).totals
    assert whole.cost_micros == 60_000_000
    assert whole.unpriced_requests == 0


async def test_a_custom_price_applies_from_its_moment_and_an_unknown_model_has_none(
    world: World,
) -> None:
    who = request_for(ALICE)  # a custom provider's model: no listed price
    tokens = Tokens(input=3_000_000, output=1_000_000, cache_read=1_000_000)
    await world.record_at(at("2026-03-02 10:00"), who, tokens)
    prices = {"input": "2", "output": "8", "cache_read": "0.5", "cache_write": "2.5"}
    await world.usage.set_price(OWNER, "custom-x", "house-model", prices, at("2026-03-03 00:00"))
    await world.record_at(at("2026-03-04 10:00"), who, tokens)
    raised = prices | {"input": "4"}
    await world.usage.set_price(OWNER, "custom-x", "house-model", raised, at("2026-03-05 00:00"))
    await world.record_at(at("2026-03-06 10:00"), who, tokens)
    report = await world.usage.summary(OWNER, "2026-03-01", "2026-03-31", ["day"])
    rows = [(t.key["day"], t.cost_micros, t.unpriced_requests) for t in report.totals]
    # 2M uncached input, 1M cache read, 1M output.
    assert rows == [
        ("2026-03-02", 0, 1),
        ("2026-03-04", 2 * 2_000_000 + 500_000 + 8_000_000, 0),
        ("2026-03-06", 2 * 4_000_000 + 500_000 + 8_000_000, 0),
    ]
    with pytest.raises(InvalidArgument) as bad:
        await world.usage.set_price(OWNER, "custom-x", "m", prices | {"output": "-1"}, None)
    assert (bad.value.code, bad.value.field) == ("invalidPrice", "output")


async def test_members_read_their_own_use_and_no_team_reads_another(world: World) -> None:
    when = at("2026-05-10 12:00")
    await world.record_at(when, request_for(ALICE), Tokens(input=100, output=1))
    await world.record_at(when, request_for(BOB), Tokens(input=20, output=2))
    await world.record_at(when, request_for(OWNER, routine="r" * 32), Tokens(input=3, output=3))
    await world.record_at(when, request_for(STRANGER), Tokens(input=9999, output=9999))
    team = await world.usage.summary(OWNER, "2026-05-01", "2026-05-31", ["member", "routine"])
    assert [(t.key["member"], t.key["routine"], t.input_tokens) for t in team.totals] == [
        ("", "r" * 32, 3),
        (ALICE.account_id, "", 100),
        (BOB.account_id, "", 20),
    ]
    # Alice asking for Bob's use gets her own; asking for all, her own too.
    for asked in (BOB.account_id, None):
        mine = await world.usage.summary(
            ALICE, "2026-05-01", "2026-05-31", ["member"], account_id=asked
        )
        assert [(t.key["member"], t.input_tokens) for t in mine.totals] == [(ALICE.account_id, 100)]
    theirs = await world.usage.summary(STRANGER, "2026-05-01", "2026-05-31", ["member"])
    assert [t.input_tokens for t in theirs.totals] == [9999]
    series = await world.usage.series(OWNER, "2026-05-09", "2026-05-11")
    assert [(t.key["day"], t.requests) for t in series.totals] == [
        ("2026-05-09", 0),
        ("2026-05-10", 3),
        ("2026-05-11", 0),
    ]


async def test_the_csv_shows_formula_like_names_as_text(world: World) -> None:
    when = at("2026-05-10 12:00")
    for model in ('=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "plain"):
        await world.record_at(when, request_for(ALICE, model=model), Tokens(input=1, output=1))
    report = await world.usage.summary(OWNER, "2026-05-01", "2026-05-31", ["model"])
    rows = list(csv.reader(io.StringIO(report_csv(report))))
    assert rows[0][0] == "model"
    assert sorted(r[0] for r in rows[1:]) == [
        "'+1",
        "'-2",
        '\'=HYPERLINK("http://x")',
        "'@SUM(A1)",
        "plain",
    ]
    assert safe_cell("\tx") == "'\tx"
    # Every cell is quoted, so a comma or quote in a name stays in its cell.
    assert report_csv(report).splitlines()[1].startswith('"')


async def test_costs_show_in_the_teams_currency_and_count_in_metrics(world: World) -> None:
    await world.usage.set_settings(TEAM, "UTC", "eur", "0.9")
    who = request_for(ALICE, provider="openai", model="o3")
    await world.record_at(at("2026-05-10 12:00"), who, Tokens(input=1000, output=500))
    report = await world.usage.summary(OWNER, "2026-05-01", "2026-05-31", [])
    expected = listed_cost("openai", "o3", Tokens(input=1000, output=500), at("2026-05-10 12:00"))
    assert expected is not None
    [total] = report.totals
    assert total.cost_micros == to_micros(expected)
    assert report.settings.currency == "EUR"
    rows = list(csv.reader(io.StringIO(report_csv(report))))
    assert rows[0][-2] == "cost_eur"
    assert Decimal(rows[1][-2]) == (expected * Decimal("0.9")).quantize(Decimal("0.0001"))
    text = generate_latest(world.metrics.registry).decode()
    assert 'crewhost_model_tokens_total{kind="input",model="o3",provider="openai"} 1000.0' in text
    assert "team" not in text.split("crewhost_model_cost_usd_total")[1].split("\n")[0]
    for zone in ("Mars/Olympus", "America", "localtime"):  # a folder; the machine's own
        with pytest.raises(InvalidArgument) as bad:
            await world.usage.set_settings(TEAM, zone, "USD", "1")
        assert bad.value.code == "invalidTimeZone"


@dataclass
class Budgets:
    world: World
    service: BudgetService
    reached: list[BudgetReached]


@pytest.fixture
async def budgets(world: World) -> Budgets:
    signals = Signals()
    reached: list[BudgetReached] = []
    signals.subscribe(BudgetReached, reached.append)
    service = BudgetService(
        world.db, world.clock, world.usage, signals, admins=lambda team: ["9" * 32]
    )
    return Budgets(world, service, reached)


def spender(member: Member, routine: str = "") -> Spender:
    who = request_for(member, routine=routine)
    return Spender(who.team_id, AGENT, who.account_id, routine, who.provider_id, who.model)


def budget_spec(**changes: str | None) -> BudgetSpec:
    values: dict[str, str | None] = {
        "name": "Alice's month",
        "scope": "member",
        "target_id": ALICE.account_id,
        "period": "month",
        "first_day": None,
        "last_day": None,
        "unit": "tokens",
        "amount": "1000",
    }
    values.update(changes)
    return BudgetSpec(**values)  # type: ignore[arg-type]


async def test_a_budget_tells_once_at_80_percent_and_refuses_at_100(budgets: Budgets) -> None:
    world, service = budgets.world, budgets.service
    made = await service.create_budget(OWNER, budget_spec())
    now = at("2026-05-10 12:00")
    await world.record_at(now, request_for(ALICE), Tokens(input=700, output=50))
    await service.check(spender(ALICE))
    assert budgets.reached == []
    await world.record_at(now + 60, request_for(ALICE), Tokens(input=40, output=20))
    # 810 of 1000: told once, however many requests check it.
    for _ in range(3):
        await service.check(spender(ALICE), estimated_input=100)
    [told] = budgets.reached
    assert told.budget_id == made.budget.id
    assert set(told.accounts) == {"9" * 32, OWNER.account_id, ALICE.account_id}
    assert "81 %" in told.title
    # Bob's requests are not Alice's: her budget leaves him alone.
    await service.check(spender(BOB), estimated_input=10_000)
    # The estimated input would pass the budget: refused, naming it and who can raise it.
    with pytest.raises(Conflict) as refused:
        await service.check(spender(ALICE), estimated_input=200)
    assert refused.value.code == "budgetExceeded"
    assert "“Alice's month”" in refused.value.message
    assert "owner or admin" in refused.value.message
    # Raised, it lets her go on; a new month starts from nothing and may warn again.
    await service.update_budget(OWNER, made.budget.id, budget_spec(amount="5000"))
    await service.check(spender(ALICE), estimated_input=200)
    [state] = await service.list_budgets(TEAM)
    assert (state.used, state.first_day, state.last_day) == (810, "2026-05-01", "2026-05-31")


async def test_a_cost_budget_of_a_routine_counts_its_runs_only(budgets: Budgets) -> None:
    world, service = budgets.world, budgets.service
    routine = "r" * 32
    await service.create_budget(
        OWNER,
        budget_spec(name="Nightly", scope="routine", target_id=routine, unit="cost", amount="10"),
    )
    priced = request_for(OWNER, provider="openai", model="o3", routine=routine)
    # o3 at $2/$8 per million: $10 of output is 1.25 million tokens.
    await world.record_at(at("2026-05-10 12:00"), priced, Tokens(output=1_250_000))
    await service.check(spender(ALICE), estimated_input=0)
    with pytest.raises(Conflict) as refused:
        await service.check(spender(OWNER, routine=routine))
    assert "$10.000000 of $10.000000" in refused.value.message


async def test_a_custom_range_caps_its_own_days_only(budgets: Budgets) -> None:
    world, service = budgets.world, budgets.service
    await service.create_budget(
        OWNER,
        budget_spec(
            name="June sprint",
            period="custom",
            first_day="2026-06-01",
            last_day="2026-06-30",
        ),
    )
    who = request_for(ALICE)
    await world.record_at(at("2026-05-20 12:00"), who, Tokens(input=5_000))
    await service.check(spender(ALICE))  # before its range: May's spending is not its
    await world.record_at(at("2026-06-10 12:00"), who, Tokens(input=1_000))
    with pytest.raises(Conflict) as refused:
        await service.check(spender(ALICE))
    assert "“June sprint”" in refused.value.message
    # Once its range is over, it refuses nothing, and still shows what its days spent.
    world.clock.advance(at("2026-07-02 12:00") - world.clock.now())
    await service.check(spender(ALICE), estimated_input=200)
    [state] = await service.list_budgets(TEAM)
    assert (state.used, state.first_day, state.last_day) == (1_000, "2026-06-01", "2026-06-30")


async def test_bad_budgets_are_refused_naming_the_field(budgets: Budgets) -> None:
    service = budgets.service
    for changes, field in (
        ({"amount": "1.5"}, "amount"),
        ({"amount": "-3", "unit": "cost"}, "amount"),
        ({"scope": "team"}, "targetId"),
        ({"period": "custom", "first_day": "2026-06-02", "last_day": "2026-06-01"}, "firstDay"),
        ({"name": " "}, "name"),
    ):
        with pytest.raises(InvalidArgument) as bad:
            await service.create_budget(OWNER, budget_spec(**changes))
        assert (bad.value.code, bad.value.field) == ("invalidBudget", field)
    assert await service.list_budgets(TEAM) == []
    # Another team's budgets are not this team's to change.
    made = await service.create_budget(OWNER, budget_spec())
    with pytest.raises(NotFound):
        await service.delete_budget(OTHER_TEAM, made.budget.id)


async def test_custom_days_are_real_dates_and_a_cost_is_at_least_a_micro_dollar(
    budgets: Budgets,
) -> None:
    service = budgets.service
    for first, last, field in (
        ("2026-02-30", "2026-03-31", "firstDay"),
        ("2026-02-01", "2026-02-30", "lastDay"),
        ("2026-13-01", "2026-13-02", "firstDay"),
        ("2026-06-01", "2026-99-99", "lastDay"),
        ("0000-00-00", "9999-12-31", "firstDay"),
        ("20260601", "2026-06-30", "firstDay"),
    ):
        with pytest.raises(InvalidArgument) as bad:
            await service.create_budget(
                OWNER, budget_spec(period="custom", first_day=first, last_day=last)
            )
        assert (bad.value.code, bad.value.field) == ("invalidBudget", field)
    # Kept in whole micro-dollars: an amount that rounds to none would refuse everything.
    with pytest.raises(InvalidArgument) as bad:
        await service.create_budget(OWNER, budget_spec(unit="cost", amount="0.0000001"))
    assert (bad.value.code, bad.value.field) == ("invalidBudget", "amount")
    assert await service.list_budgets(TEAM) == []
    leap = await service.create_budget(
        OWNER, budget_spec(period="custom", first_day="2028-02-29", last_day="2028-02-29")
    )
    assert (leap.first_day, leap.last_day) == ("2028-02-29", "2028-02-29")
    least = await service.create_budget(OWNER, budget_spec(unit="cost", amount="0.000001"))
    assert least.budget.amount == 1


async def test_requests_checked_together_cannot_all_pass_the_remainder(
    budgets: Budgets,
) -> None:
    world, service = budgets.world, budgets.service
    await service.create_budget(OWNER, budget_spec())
    await world.record_at(at("2026-05-10 12:00"), request_for(ALICE), Tokens(input=900))
    # Ten requests of Alice's turns check at once: one may go, holding its 50 + 500; the
    # remainder would let each of the others go alone, so they wait for it.
    checks = [asyncio.create_task(service.hold(spender(ALICE), 50, 500)) for _ in range(10)]
    done, waiting = await asyncio.wait(checks, return_when=asyncio.FIRST_COMPLETED)
    [going] = [task.result() for task in done]
    assert len(waiting) == 9
    # A new turn of hers is not refused for what the request only holds; Bob's budgets
    # are not hers.
    await service.check(spender(ALICE))
    await service.hold(spender(BOB), 5_000, 500)
    assert not any(task.done() for task in waiting)
    # Recorded, the request counts what it spent instead of its hold: the remainder, 30,
    # is less than another request's input, and the nine are refused.
    await world.usage.record(request_for(ALICE), Tokens(input=50, output=20), 0.1, ok=True)
    service.release(going)
    service.release(going)  # once is all it holds
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(o, Conflict) and o.code == "budgetExceeded" for o in outcomes)
    await service.check(spender(ALICE), estimated_input=29)
    with pytest.raises(Conflict) as spent:
        await service.check(spender(ALICE), estimated_input=30)
    assert "The budget “" in spent.value.message
    [state] = await service.list_budgets(TEAM)
    assert state.used == 970


async def test_a_request_waits_for_holds_and_goes_when_their_replies_were_short(
    budgets: Budgets, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, service = budgets.world, budgets.service
    await service.create_budget(OWNER, budget_spec())
    await world.record_at(at("2026-05-10 12:00"), request_for(ALICE), Tokens(input=400))
    first = await service.hold(spender(ALICE), 50, 500)
    # While the first holds the most it may write, a second request waits; a hold never
    # recorded keeps it waiting only so long, then it is refused and told what was held.
    monkeypatch.setattr(budgets_module, "HELD_WAIT_SECONDS", 0.01)
    with pytest.raises(Conflict) as refused:
        await service.hold(spender(ALICE), 50, 500)
    assert refused.value.code == "budgetExceeded"
    assert "550 tokens held by requests under way" in refused.value.message
    monkeypatch.undo()
    second = asyncio.create_task(service.hold(spender(ALICE), 50, 500))
    # The first, recorded, wrote 20: the second goes.
    await world.usage.record(request_for(ALICE), Tokens(input=50, output=20), 0.1, ok=True)
    service.release(first)
    assert (await second).amounts


async def test_a_hold_let_go_while_a_request_reads_the_rollups_wakes_it(
    budgets: Budgets, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, service = budgets.world, budgets.service
    await service.create_budget(OWNER, budget_spec())
    await world.record_at(at("2026-05-10 12:00"), request_for(ALICE), Tokens(input=400))
    first = await service.hold(spender(ALICE), 50, 500)
    # The first request is recorded and let go while the second's check reads the budget's
    # state, after it read the holds: the second must not wait for a release that came.
    read_state = service._state
    let_go = False

    async def state_then_let_go(budget: BudgetRow) -> BudgetState:
        nonlocal let_go
        found = await read_state(budget)
        if not let_go:
            let_go = True
            await world.usage.record(request_for(ALICE), Tokens(input=50, output=20), 0.1, ok=True)
            service.release(first)
        return found

    monkeypatch.setattr(service, "_state", state_then_let_go)
    # Were the wake-up lost, the wait would run out and refuse.
    monkeypatch.setattr(budgets_module, "HELD_WAIT_SECONDS", 30)
    assert (await service.hold(spender(ALICE), 50, 500)).amounts


async def test_a_budget_raised_while_a_request_waits_lets_it_go(budgets: Budgets) -> None:
    world, service = budgets.world, budgets.service
    made = await service.create_budget(OWNER, budget_spec())
    await world.record_at(at("2026-05-10 12:00"), request_for(ALICE), Tokens(input=400))
    await service.hold(spender(ALICE), 50, 500)
    waiting = asyncio.create_task(service.hold(spender(ALICE), 50, 500))
    await service.update_budget(OWNER, made.budget.id, budget_spec(amount="5000"))
    assert (await waiting).amounts


async def test_a_meters_hold_ends_when_its_request_is_recorded_or_its_task_ends(
    budgets: Budgets, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, service = budgets.world, budgets.service
    # Another request of hers waits for what the meter holds, here not at all.
    monkeypatch.setattr(budgets_module, "HELD_WAIT_SECONDS", 0)

    async def another_request_waits() -> bool:
        try:
            service.release(await service.hold(spender(ALICE), 1, 1))
        except Conflict:
            return True
        return False

    world.clock.advance(at("2026-05-10 12:00") - world.clock.now())
    meters = UsageMeters(world.usage, service)
    await service.create_budget(OWNER, budget_spec(amount=str(ASSUMED_OUTPUT_TOKENS + 100)))
    meter = meters.for_turn(request_for(ALICE))
    # Its input as estimated and a whole reply's output are held while it runs.
    await meter.before_request(100)
    assert await another_request_waits()
    await meters.check_start(request_for(ALICE))  # a new turn is not refused for a hold
    await meter.requested(Usage(100, 30), 0.1, ok=True)
    assert not await another_request_waits()
    [state] = await service.list_budgets(TEAM)
    assert state.used == 130

    # A request cancelled under way (a stopped turn) is never recorded: its task's end
    # lets its hold go.
    asked = asyncio.Event()

    async def stopped_turn() -> None:
        await meter.before_request(0)
        asked.set()
        await asyncio.Event().wait()  # the reply that never comes

    task = asyncio.create_task(stopped_turn())
    await asked.wait()
    assert await another_request_waits()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert not await another_request_waits()

    # A request that broke before it was recorded is let go by the next one of its task.
    await meter.before_request(0)
    await meter.before_request(0)
    meter.release()
    assert not await another_request_waits()


async def test_a_series_stacked_by_day_lists_every_day(world: World) -> None:
    await world.record_at(at("2026-05-10 12:00"), request_for(ALICE), Tokens(input=5))
    series = await world.usage.series(OWNER, "2026-05-09", "2026-05-11", "day")
    assert [(t.key, t.input_tokens) for t in series.totals] == [
        ({"day": "2026-05-09"}, 0),
        ({"day": "2026-05-10"}, 5),
        ({"day": "2026-05-11"}, 0),
    ]


@pytest.mark.parametrize(
    ("provider", "model", "when"),
    [
        ("anthropic", "claude-sonnet-4-5", "2026-05-10 12:00"),  # tiered above 200,000 input
        ("openai", "o3", "2025-06-09 12:00"),
        ("openai", "o3", "2025-06-11 12:00"),
        ("openai", "gpt-4.1", "2026-05-10 12:00"),
    ],
)
def test_listed_costs_are_genai_prices_own_to_the_last_digit(
    provider: str, model: str, when: str
) -> None:
    moment = at(when)
    for tokens in (
        Tokens(input=10, output=3),
        Tokens(input=1500, output=700, cache_read=400, cache_write=300),
        Tokens(input=200_000, output=1, cache_read=100_000),
        Tokens(input=200_001, output=5000, cache_write=1),
        Tokens(input=1_000_000, output=20_000, cache_read=250_000, cache_write=125_000),
    ):
        usage = genai_prices.Usage(
            input_tokens=tokens.input,
            output_tokens=tokens.output,
            cache_read_tokens=tokens.cache_read,
            cache_write_tokens=tokens.cache_write,
        )
        listed = genai_prices.calc_price(
            usage,
            model,
            provider_id=provider,
            genai_request_timestamp=datetime.fromtimestamp(moment, UTC),
        )
        assert listed_cost(provider, model, tokens, moment) == listed.total_price
    assert listed_cost(provider, "no-such-model-anywhere", Tokens(input=1), moment) is None
    assert listed_cost("custom-x", model, Tokens(input=1), moment) is None
