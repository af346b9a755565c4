"""Budgets: how much a team, an agent, a member or a routine may spend per calendar month in
the team's time zone (or per custom range of days), in US dollars or in tokens.

Before each model request the budgets that concern it are read against the rollups of
their period, with the request's input estimated (the last request's input in the turn):
at 80 % the owners, admins and the member concerned are told once per period
(``BudgetReached``); at 100 % the request is refused with ``budgetExceeded``, a sentence
that names the budget and who can raise it. A new turn or routine run is refused the same
way before it starts; a running turn ends ``budget`` instead of asking again.

A request under way holds its estimate (its estimated input and the most output it may
write) against each budget that concerns it until it is recorded (``BudgetHold``): turns
that check together each count what the others hold, so they cannot all pass the same
remainder. A request that the budget's remainder allows but other requests' holds do not
waits for them to be recorded (``HELD_WAIT_SECONDS`` at most), then is checked again
against what they spent: most replies write far less than the most they may, and a
second turn is not refused for what the first only might spend. A new turn is refused
only when a budget is spent, holds aside: its first request waits if it must. Holds live
in memory; a team's checks take them one at a time.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from server.common.clock import Clock
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.db.engine import Database
from server.host.agents.usage import UsageService, day_of, month_of, usd
from server.host.agents.usage_prices import Tokens, to_micros
from server.host.agents.work_signals import BudgetReached
from server.host.services.workspace import Member
from server.host.signals import Signals
from server.host.storage.usage import BudgetRow, UsageRepository

Scope = Literal["team", "agent", "member", "routine"]
Period = Literal["month", "custom"]
Unit = Literal["cost", "tokens"]
WARN_AT = Decimal("0.8")
MAX_BUDGETS = 200
MAX_AMOUNT_USD = Decimal(1_000_000_000)
MAX_TOKENS = 10**15
# How long a request waits for other requests' holds to be recorded before it is refused.
HELD_WAIT_SECONDS = 300.0
_COLUMNS: dict[str, str | None] = {
    "team": None,
    "agent": "agent_id",
    "member": "account_id",
    "routine": "routine_id",
}
# The owners and admins of a team the host knows now (connected ones).
TeamAdmins = Callable[[str], Sequence[str]]


@dataclass(frozen=True, slots=True)
class BudgetSpec:
    """What a person gives for a budget. ``amount`` is US dollars (a decimal) for unit
    ``cost``, a whole number for ``tokens``."""

    name: str
    scope: str
    target_id: str | None
    period: str
    first_day: str | None
    last_day: str | None
    unit: str
    amount: str


@dataclass(frozen=True, slots=True)
class BudgetState:
    """A budget and what its current period has used."""

    budget: BudgetRow
    first_day: str
    last_day: str
    used: int

    @property
    def fraction(self) -> Decimal:
        return (
            Decimal(self.used) / Decimal(self.budget.amount) if self.budget.amount else Decimal(1)
        )


@dataclass(frozen=True, slots=True)
class Spender:
    """Who is about to spend: the request's agent, member ('' none) and routine ('')."""

    team_id: str
    agent_id: str
    account_id: str
    routine_id: str
    provider_id: str
    model: str

    def concerns(self, budget: BudgetRow) -> bool:
        return {
            "team": True,
            "agent": budget.target_id == self.agent_id,
            "member": budget.target_id == self.account_id,
            "routine": budget.target_id == self.routine_id,
        }[budget.scope]


@dataclass(eq=False)
class BudgetHold:
    """What one request under way may spend, held against each budget that concerns it
    (budget id -> amount in the budget's unit) until ``BudgetService.release``."""

    team_id: str
    amounts: dict[str, int] = field(default_factory=dict)


class BudgetService:
    """Keeps budgets and checks spending against them."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        usage: UsageService,
        signals: Signals,
        admins: TeamAdmins,
    ) -> None:
        self._db = db
        self._clock = clock
        self._usage = usage
        self._signals = signals
        self._admins = admins
        self._repo = UsageRepository()
        # The team's budgets, read once and kept until one changes.
        self._budgets: dict[str, list[BudgetRow]] = {}
        # Per team: budget id -> what the requests under way hold; and the lock its checks take.
        self._held: dict[str, dict[str, int]] = {}
        self._checking: dict[str, asyncio.Lock] = {}
        # Per team: set (and replaced) when a hold is let go or a budget changes; the
        # requests waiting for holds wait for it.
        self._changed: dict[str, asyncio.Event] = {}

    # -- what owners and admins do -------------------------------------------------------

    async def list_budgets(self, team_id: str) -> list[BudgetState]:
        return [await self._state(b) for b in await self._of_team(team_id)]

    async def create_budget(self, member: Member, spec: BudgetSpec) -> BudgetState:
        if len(await self._of_team(member.team_id)) >= MAX_BUDGETS:
            raise Conflict(f"a team has at most {MAX_BUDGETS} budgets", code="tooManyBudgets")
        now = self._clock.now()
        row = BudgetRow(
            id=uuid.uuid4().hex,
            team_id=member.team_id,
            created_by=member.account_id,
            updated_by=member.account_id,
            created_at=now,
            updated_at=now,
            warned_period=None,
            **_checked(spec),
        )
        async with self._db.write() as conn:
            await self._repo.add_budget(conn, row)
        self._budgets.pop(member.team_id, None)
        self._wake(member.team_id)
        return await self._state(row)

    async def update_budget(self, member: Member, budget_id: str, spec: BudgetSpec) -> BudgetState:
        """Change a budget; its 80 % notice may go again if it is now below that."""
        async with self._db.write() as conn:
            found = await self._repo.get_budget(conn, member.team_id, budget_id)
            if found is None:
                raise NotFound("no such budget", code="budgetNotFound")
            row = replace(
                found,
                updated_by=member.account_id,
                updated_at=self._clock.now(),
                warned_period=None,
                **_checked(spec),
            )
            await self._repo.update_budget(conn, row)
        self._budgets.pop(member.team_id, None)
        self._wake(member.team_id)
        return await self._state(row)

    async def delete_budget(self, team_id: str, budget_id: str) -> None:
        async with self._db.write() as conn:
            if not await self._repo.remove_budget(conn, team_id, budget_id):
                raise NotFound("no such budget", code="budgetNotFound")
        self._budgets.pop(team_id, None)
        self._wake(team_id)

    # -- checks --------------------------------------------------------------------------

    async def check(self, spender: Spender, estimated_input: int = 0) -> None:
        """Before a new turn or run: ``budgetExceeded`` when a budget that concerns it is
        spent (``estimated_input`` counted; what requests under way hold is not: the turn's
        own requests wait for them); holds nothing. Tells the people concerned once per
        period when one passes 80 %."""
        await self._check(spender, estimated_input, None)

    async def hold(
        self, spender: Spender, estimated_input: int, expected_output: int
    ) -> BudgetHold:
        """Before a model request: ``budgetExceeded`` when what a budget that concerns it
        used and the request's estimated input reach the budget; else, when what other
        requests under way hold would reach it too, waits for them to be recorded and
        checks again (``HELD_WAIT_SECONDS`` at most, then ``budgetExceeded``); else the
        request holds its estimated input and ``expected_output`` against each such
        budget until ``release``. Tells the people concerned once per period when a
        budget passes 80 %."""
        return await self._check(spender, estimated_input, expected_output)

    async def _check(
        self, spender: Spender, estimated_input: int, expected_output: int | None
    ) -> BudgetHold:
        """The check; with ``expected_output`` (not None) the request's hold taken. Each pass
        reads the budgets anew: one raised or removed while a request waits counts."""
        waiting_until = asyncio.get_running_loop().time() + HELD_WAIT_SECONDS
        while True:
            budgets = [b for b in await self._of_team(spender.team_id) if spender.concerns(b)]
            if not budgets:
                return BudgetHold(spender.team_id)
            hold, blocked = await self._try_hold(spender, budgets, estimated_input, expected_output)
            if blocked is None:
                return hold
            state, others, changed = blocked
            left = waiting_until - asyncio.get_running_loop().time()
            try:
                async with asyncio.timeout(max(left, 0)):
                    await changed.wait()
            except TimeoutError:
                raise Conflict(_spent_sentence(state, others), code="budgetExceeded") from None

    async def _try_hold(
        self,
        spender: Spender,
        budgets: list[BudgetRow],
        estimated_input: int,
        expected_output: int | None,
    ) -> tuple[BudgetHold, tuple[BudgetState, int, asyncio.Event] | None]:
        """One pass of the check: the hold taken, or the budget that other requests' holds
        block with what they hold and the event set when a hold or a budget changes."""
        hold = BudgetHold(spender.team_id)
        async with self._lock(spender.team_id):
            # Read before the rollups: a request that lets its hold go was recorded first, so
            # it counts in one or the other (or both, never neither). The event is taken with
            # them: a hold let go while this pass reads the rollups sets it.
            held = dict(self._held.get(spender.team_id, {}))
            changed = self._changed_event(spender.team_id)
            estimate = Tokens(input=estimated_input)
            whole = Tokens(input=estimated_input, output=expected_output or 0)
            for budget in budgets:
                state = await self._state(budget)
                if not state.first_day <= await self._today(budget.team_id) <= state.last_day:
                    continue  # a custom range not begun or over: today's spending is not its
                if state.fraction >= WARN_AT:
                    await self._warn(state, spender)
                coming = await self._in_unit(budget, spender, estimate)
                if state.used + coming >= budget.amount:
                    raise Conflict(_spent_sentence(state), code="budgetExceeded")
                if expected_output is None:
                    continue
                others = held.get(budget.id, 0)
                if state.used + others + coming >= budget.amount:
                    return hold, (state, others, changed)
                hold.amounts[budget.id] = await self._in_unit(budget, spender, whole)
            team = self._held.setdefault(spender.team_id, {})
            for budget_id, amount in hold.amounts.items():
                team[budget_id] = team.get(budget_id, 0) + amount
        return hold, None

    def _changed_event(self, team_id: str) -> asyncio.Event:
        event = self._changed.get(team_id)
        if event is None:
            event = self._changed[team_id] = asyncio.Event()
        return event

    def _wake(self, team_id: str) -> None:
        """A hold was let go or a budget changed: the team's waiting requests check again."""
        event = self._changed.pop(team_id, None)
        if event is not None:
            event.set()

    def release(self, hold: BudgetHold) -> None:
        """The request of ``hold`` is recorded, failed or cancelled: it holds nothing more
        (a second release does nothing)."""
        team = self._held.get(hold.team_id, {})
        for budget_id, amount in hold.amounts.items():
            left = team.get(budget_id, 0) - amount
            if left > 0:
                team[budget_id] = left
            else:
                team.pop(budget_id, None)
        if hold.amounts:
            self._wake(hold.team_id)
        hold.amounts.clear()

    async def _in_unit(self, budget: BudgetRow, spender: Spender, tokens: Tokens) -> int:
        """``tokens`` in the budget's unit (an unpriced model costs nothing)."""
        if budget.unit == "tokens":
            return tokens.total
        cost = await self._usage.cost(
            spender.team_id, spender.provider_id, spender.model, tokens, self._clock.now()
        )
        return 0 if cost is None else to_micros(cost)

    def _lock(self, team_id: str) -> asyncio.Lock:
        lock = self._checking.get(team_id)
        if lock is None:
            lock = self._checking[team_id] = asyncio.Lock()
        return lock

    async def _warn(self, state: BudgetState, spender: Spender) -> None:
        budget = state.budget
        if budget.warned_period == state.first_day:
            return  # told in this period already, as the team's budgets read
        async with self._db.write() as conn:
            first = await self._repo.update_warned(conn, budget.team_id, budget.id, state.first_day)
        if not first:
            return
        self._budgets.pop(budget.team_id, None)
        concerned = budget.target_id if budget.scope == "member" else spender.account_id
        accounts = [*self._admins(budget.team_id), budget.created_by, budget.updated_by]
        if concerned:
            accounts.append(concerned)
        self._signals.publish(
            BudgetReached(
                team_id=budget.team_id,
                budget_id=budget.id,
                agent_id=spender.agent_id,
                title=f"Budget “{budget.name}” is {int(state.fraction * 100)} % spent",
                body=f"{_used_words(state)}. An owner or admin can raise it in Usage.",
                accounts=tuple(dict.fromkeys(accounts)),
            )
        )

    async def _state(self, budget: BudgetRow) -> BudgetState:
        first, last = await self._period(budget)
        # Every request recorded so far counts.
        await self._usage.flush()
        async with self._db.read() as conn:
            tokens, cost = await self._repo.get_spent(
                conn, budget.team_id, first, last, _COLUMNS[budget.scope], budget.target_id
            )
        return BudgetState(budget, first, last, tokens if budget.unit == "tokens" else cost)

    async def _period(self, budget: BudgetRow) -> tuple[str, str]:
        if budget.period == "custom" and budget.first_day and budget.last_day:
            return budget.first_day, budget.last_day
        return month_of(await self._today(budget.team_id))

    async def _today(self, team_id: str) -> str:
        """Today's date in the team's time zone, as the rollups name their days."""
        settings = await self._usage.settings_of(team_id)
        return day_of(self._clock.now(), settings.zone)

    async def _of_team(self, team_id: str) -> list[BudgetRow]:
        found = self._budgets.get(team_id)
        if found is None:
            async with self._db.read() as conn:
                found = self._budgets[team_id] = await self._repo.list_budgets(conn, team_id)
        return found


def _checked(spec: BudgetSpec) -> dict[str, Any]:
    """The budget's fields from what a person gave, or ``invalidBudget`` naming the field."""
    name = spec.name.strip()
    if not name or len(name) > 100:
        raise InvalidArgument("a name of 1 to 100 characters", code="invalidBudget", field="name")
    if spec.scope not in _COLUMNS:
        raise InvalidArgument(
            "one of team, agent, member, routine", code="invalidBudget", field="scope"
        )
    target = spec.target_id or ""
    if (spec.scope == "team") != (not target):
        raise InvalidArgument(
            "a team budget names no target; the others name their agent, member or routine",
            code="invalidBudget",
            field="targetId",
        )
    first = last = None
    if spec.period == "custom":
        first, last = _day(spec.first_day, "firstDay"), _day(spec.last_day, "lastDay")
        if first > last:
            raise InvalidArgument(
                "the first day comes after the last", code="invalidBudget", field="firstDay"
            )
    elif spec.period != "month":
        raise InvalidArgument("month or custom", code="invalidBudget", field="period")
    return {
        "name": name,
        "scope": spec.scope,
        "target_id": target,
        "period": spec.period,
        "first_day": first,
        "last_day": last,
        "unit": spec.unit,
        "amount": _amount(spec.unit, spec.amount),
    }


def _day(text: str | None, name: str) -> str:
    """A custom period's day as given (a real calendar day, YYYY-MM-DD), or
    ``invalidBudget`` naming the field ``name``."""
    try:
        day = date.fromisoformat(text or "")
    except ValueError:
        day = None
    if day is None or day.isoformat() != text:
        raise InvalidArgument(
            "a custom period names its first and last day, real dates as YYYY-MM-DD",
            code="invalidBudget",
            field=name,
        )
    return day.isoformat()


def _amount(unit: str, text: str) -> int:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = Decimal(-1)
    if unit == "tokens":
        if value.is_finite() and value == value.to_integral_value() and 0 < value <= MAX_TOKENS:
            return int(value)
        raise InvalidArgument(
            "a whole number of tokens above 0", code="invalidBudget", field="amount"
        )
    if unit == "cost":
        # Kept in whole micro-dollars: an amount that rounds to none would refuse everything.
        if value.is_finite() and value <= MAX_AMOUNT_USD and to_micros(value) > 0:
            return to_micros(value)
        raise InvalidArgument(
            "an amount in US dollars of at least $0.000001", code="invalidBudget", field="amount"
        )
    raise InvalidArgument("cost or tokens", code="invalidBudget", field="unit")


def amount_text(budget: BudgetRow, value: int) -> str:
    return f"${usd(value)}" if budget.unit == "cost" else f"{value:,} tokens"


def _used_words(state: BudgetState) -> str:
    budget = state.budget
    period = (
        f"{state.first_day} to {state.last_day}"
        if budget.period == "custom"
        else f"the month from {state.first_day}"
    )
    return (
        f"{amount_text(budget, state.used)} of {amount_text(budget, budget.amount)} used "
        f"for {period}"
    )


def _spent_sentence(state: BudgetState, held: int = 0) -> str:
    budget = state.budget
    under_way = f"; {amount_text(budget, held)} held by requests under way" if held else ""
    return (
        f"The budget “{budget.name}” is spent ({_used_words(state)}{under_way}). "
        "An owner or admin of the team can raise it in Usage → Budgets."
    )
