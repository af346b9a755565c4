"""Usage: every model request recorded with what it cost, summed per day for reports.

Each request is one row of ``model_requests`` and a share of one ``usage_rollups`` row (per
team, day, agent, member, provider, model and routine), written in one transaction; reports
read the rollups only. A day is a calendar day in the team's time zone (``usage_settings``,
UTC until an owner or admin sets one), so a month or any range of days in that zone is an
exact sum of whole rollup rows, across DST changes too. Setting another zone recounts the
team's days once.

Owners and admins read the whole team's use; a member reads their own, whatever they ask.

Recording costs the turn almost nothing: a request's row is priced and kept in memory, and
a writer adds the rows gathered meanwhile (``FLUSH_SECONDS``) with their rollups in one
transaction. Every report and budget check writes what is pending first, so it reads every
request recorded before it; the host writes them at shutdown too.
"""

from __future__ import annotations

import asyncio
import csv
import io
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from zoneinfo import ZoneInfo

from server.common.clock import Clock
from server.common.errors import InvalidArgument, NotFound
from server.common.roles import Role
from server.common.tasks import BackgroundTasks
from server.common.time_zones import is_time_zone
from server.db.engine import Database
from server.host.agents.usage_prices import (
    MICROS,
    TeamPrice,
    Tokens,
    listed_cost,
    price_of,
    to_micros,
)
from server.host.metrics import HostMetrics
from server.host.services.workspace import Member
from server.host.storage.usage import (
    GROUP_COLUMNS,
    ModelRequestRow,
    PriceRow,
    UsageRepository,
    UsageSettingsRow,
    UsageTotals,
)

log = logging.getLogger(__name__)

# How long recorded requests wait to be written together.
FLUSH_SECONDS = 0.2
# The longest range one report covers.
MAX_RANGE_DAYS = 400
MAX_RATE = Decimal(1_000_000)
DEFAULT_SETTINGS = ("UTC", "USD", "1")
# Characters a spreadsheet reads as the start of a formula (OWASP CSV injection), with the
# tab and carriage return it also strips first.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class RequestFor:
    """Who a turn's model requests are for: the agent, thread and turn, the member who
    started it ('' for none) and the routine whose run it is ('')."""

    team_id: str
    agent_id: str
    thread_id: str | None
    turn_id: str | None
    account_id: str
    routine_id: str
    provider_id: str
    model: str


@dataclass(frozen=True, slots=True)
class UsageSettings:
    time_zone: str
    currency: str
    rate: Decimal

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)


@dataclass(frozen=True, slots=True)
class UsageReport:
    """A report's groups, its range, and the settings its costs are shown in."""

    first_day: str
    last_day: str
    group_by: tuple[str, ...]
    totals: list[UsageTotals]
    settings: UsageSettings


class UsageService:
    """Records model requests and reports on them; keeps team prices and usage settings."""

    def __init__(self, db: Database, clock: Clock, metrics: HostMetrics) -> None:
        self._db = db
        self._clock = clock
        self._metrics = metrics
        self._repo = UsageRepository()
        self._settings: dict[str, UsageSettings] = {}
        # Recorded requests not yet written, and the writer that takes them.
        self._pending: list[ModelRequestRow] = []
        self._writing = asyncio.Lock()
        self._writer = BackgroundTasks("usage writer")
        self._flush_due = False
        # (team, provider, model) -> the team's prices of the model, oldest first.
        self._prices: dict[str, dict[tuple[str, str], list[TeamPrice]]] = {}

    # -- recording -----------------------------------------------------------------------

    async def record(
        self, who: RequestFor, tokens: Tokens, seconds: float, *, ok: bool
    ) -> ModelRequestRow:
        """One model request with its cost, written with its share of its day's rollup
        within ``FLUSH_SECONDS`` (or at the next report, budget check or shutdown)."""
        now = self._clock.now()
        settings = await self.settings_of(who.team_id)
        cost = await self.cost(who.team_id, who.provider_id, who.model, tokens, now)
        row = ModelRequestRow(
            id=uuid.uuid4().hex,
            team_id=who.team_id,
            agent_id=who.agent_id,
            thread_id=who.thread_id,
            turn_id=who.turn_id,
            account_id=who.account_id,
            routine_id=who.routine_id,
            provider_id=who.provider_id,
            model=who.model,
            input_tokens=tokens.input,
            output_tokens=tokens.output,
            cache_read_tokens=tokens.cache_read,
            cache_write_tokens=tokens.cache_write,
            reasoning_tokens=tokens.reasoning,
            latency_ms=round(seconds * 1000),
            status="ok" if ok else "failed",
            cost_micros=None if cost is None else to_micros(cost),
            at=now,
            day=day_of(now, settings.zone),
        )
        self._pending.append(row)
        self._count(row)
        if not self._flush_due:
            self._flush_due = True
            self._writer.start(self._flush_soon())
        return row

    async def _flush_soon(self) -> None:
        await asyncio.sleep(FLUSH_SECONDS)
        try:
            await self.flush()
        except Exception:
            # Kept for the next attempt: a report or the next request's writer.
            log.exception("recorded model requests could not be written")

    async def flush(self) -> None:
        """Write the recorded requests not yet written, with their rollups, in one
        transaction."""
        async with self._writing:
            self._flush_due = False
            rows, self._pending = self._pending, []
            if not rows:
                return
            try:
                async with self._db.write() as conn:
                    await self._repo.add_requests(conn, rows)
            except BaseException:
                self._pending[:0] = rows
                raise

    async def close(self) -> None:
        """The host stops: what is recorded is written."""
        await self._writer.drain()
        await self.flush()

    def _count(self, row: ModelRequestRow) -> None:
        provider = metric_provider(row.provider_id)
        tokens = self._metrics.model_tokens
        for kind in ("input", "output", "cache_read", "cache_write", "reasoning"):
            count = getattr(row, f"{kind}_tokens")
            if count:
                tokens.labels(provider, row.model, kind).inc(count)
        if row.cost_micros:
            self._metrics.model_cost.labels(provider, row.model).inc(row.cost_micros / 1_000_000)

    async def cost(
        self, team_id: str, provider_id: str, model: str, tokens: Tokens, at: float
    ) -> Decimal | None:
        """USD: the team's price in force at ``at`` when it has one, else the listed price;
        None when the model has no price."""
        prices = (await self._team_prices(team_id)).get((provider_id, model), [])
        in_force = [p for p in prices if p.valid_from <= at]
        if in_force:
            return in_force[-1].cost(tokens)
        return listed_cost(provider_id, model, tokens, at)

    # -- reports -------------------------------------------------------------------------

    async def summary(
        self,
        member: Member,
        first_day: str | None,
        last_day: str | None,
        group_by: Sequence[str],
        *,
        account_id: str | None = None,
    ) -> UsageReport:
        """Sums per group over the days (in the team's zone; this month by default). A
        member reads their own use only, whoever they name."""
        for name in group_by:
            if name not in GROUP_COLUMNS:
                raise InvalidArgument(f"one of {', '.join(GROUP_COLUMNS)}", field="by")
        groups = tuple(dict.fromkeys(group_by))
        settings = await self.settings_of(member.team_id)
        first, last = self._range(first_day, last_day, settings)
        if not member.role.at_least(Role.ADMIN):
            account_id = member.account_id
        await self.flush()
        async with self._db.read() as conn:
            totals = await self._repo.list_totals(
                conn, member.team_id, first, last, groups, account_id=account_id
            )
        return UsageReport(first, last, groups, totals, settings)

    async def series(
        self,
        member: Member,
        first_day: str | None,
        last_day: str | None,
        stack_by: str | None = None,
        *,
        account_id: str | None = None,
    ) -> UsageReport:
        """Sums per day (and per ``stack_by`` within each), every day of the range listed
        (an empty one with '' for ``stack_by``). Stacked by ``day``, each day is its own
        one stack: the same as not stacked."""
        stack = None if stack_by == "day" else stack_by
        groups = ["day"] if stack is None else ["day", stack]
        report = await self.summary(member, first_day, last_day, groups, account_id=account_id)
        present = {t.key["day"] for t in report.totals}
        empty = [
            UsageTotals({"day": day} | ({stack: ""} if stack else {}), *([0] * 8))
            for day in days_between(report.first_day, report.last_day)
            if day not in present
        ]
        totals = sorted([*report.totals, *empty], key=lambda t: tuple(t.key.values()))
        return replace(report, totals=totals)

    def _range(
        self, first_day: str | None, last_day: str | None, settings: UsageSettings
    ) -> tuple[str, str]:
        today = day_of(self._clock.now(), settings.zone)
        last = _day(last_day, "to") if last_day else today
        first = _day(first_day, "from") if first_day else last[:8] + "01"
        if first > last:
            raise InvalidArgument("the first day comes after the last", field="from")
        span = date.fromisoformat(last) - date.fromisoformat(first)
        if span.days >= MAX_RANGE_DAYS:
            raise InvalidArgument(f"a range of at most {MAX_RANGE_DAYS} days", field="from")
        return first, last

    # -- settings ------------------------------------------------------------------------

    async def settings_of(self, team_id: str) -> UsageSettings:
        found = self._settings.get(team_id)
        if found is None:
            async with self._db.read() as conn:
                row = await self._repo.get_settings(conn, team_id)
            zone, currency, rate = (
                DEFAULT_SETTINGS if row is None else (row.time_zone, row.currency, row.rate)
            )
            found = self._settings[team_id] = UsageSettings(zone, currency, Decimal(rate))
        return found

    async def set_settings(
        self, team_id: str, time_zone: str, currency: str, rate: str
    ) -> UsageSettings:
        """The team's time zone, display currency and its rate (units per US dollar); a new
        zone recounts the days of the team's requests and rebuilds its rollups."""
        if not is_time_zone(time_zone):
            raise InvalidArgument(
                f"{time_zone!r} is not an IANA time zone", code="invalidTimeZone", field="timeZone"
            )
        code = currency.strip().upper()
        if len(code) != 3 or not code.isascii() or not code.isalpha():
            raise InvalidArgument(
                "a three-letter currency code (ISO 4217)", code="invalidCurrency", field="currency"
            )
        try:
            value = Decimal(rate.strip())
        except InvalidOperation:
            value = Decimal(0)
        if code == "USD":
            value = Decimal(1)
        if not value.is_finite() or value <= 0 or value > MAX_RATE:
            raise InvalidArgument(
                f"units of {code} per US dollar, above 0 and at most {MAX_RATE}",
                code="invalidCurrency",
                field="rate",
            )
        before = await self.settings_of(team_id)
        await self.flush()
        settings = UsageSettings(time_zone, code, value)
        zone = settings.zone
        async with self._db.write() as conn:
            await self._repo.update_settings(
                conn, UsageSettingsRow(team_id, time_zone, code, str(value), self._clock.now())
            )
            if time_zone != before.time_zone:
                times = await self._repo.list_request_times(conn, team_id)
                await self._repo.update_days(
                    conn, team_id, ((i, day_of(t, zone)) for i, t in times)
                )
        self._settings[team_id] = settings
        return settings

    # -- prices --------------------------------------------------------------------------

    async def list_prices(self, team_id: str) -> list[PriceRow]:
        async with self._db.read() as conn:
            return await self._repo.list_prices(conn, team_id)

    async def set_price(
        self,
        member: Member,
        provider_id: str,
        model: str,
        prices: dict[str, str],
        valid_from: float | None,
    ) -> PriceRow:
        """The team's price of a model (USD per million tokens) from ``valid_from`` (now by
        default) on; requests already recorded keep the cost they were given."""
        checked = {name: str(price_of(text, _camel(name))) for name, text in prices.items()}
        now = self._clock.now()
        row = PriceRow(
            id=uuid.uuid4().hex,
            team_id=member.team_id,
            provider_id=provider_id,
            model=model,
            valid_from=now if valid_from is None else valid_from,
            input=checked["input"],
            output=checked["output"],
            cache_read=checked["cache_read"],
            cache_write=checked["cache_write"],
            created_by=member.account_id,
            created_at=now,
        )
        async with self._db.write() as conn:
            await self._repo.add_price(conn, row)
        self._prices.pop(member.team_id, None)
        return row

    async def delete_price(self, team_id: str, price_id: str) -> None:
        async with self._db.write() as conn:
            if not await self._repo.remove_price(conn, team_id, price_id):
                raise NotFound("no such price", code="priceNotFound")
        self._prices.pop(team_id, None)

    async def _team_prices(self, team_id: str) -> dict[tuple[str, str], list[TeamPrice]]:
        found = self._prices.get(team_id)
        if found is None:
            found = {}
            for row in await self.list_prices(team_id):
                found.setdefault((row.provider_id, row.model), []).append(
                    TeamPrice(
                        row.valid_from,
                        Decimal(row.input),
                        Decimal(row.output),
                        Decimal(row.cache_read),
                        Decimal(row.cache_write),
                    )
                )
            self._prices[team_id] = found
        return found


def day_of(at: float, zone: ZoneInfo) -> str:
    """The calendar day (YYYY-MM-DD) of the moment ``at`` in ``zone``."""
    return datetime.fromtimestamp(at, UTC).astimezone(zone).date().isoformat()


def days_between(first: str, last: str) -> list[str]:
    start, end = date.fromisoformat(first), date.fromisoformat(last)
    return [(start + timedelta(days=n)).isoformat() for n in range((end - start).days + 1)]


def month_of(day: str) -> tuple[str, str]:
    """The first and last day of the calendar month of ``day``."""
    first = date.fromisoformat(day).replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    return first.isoformat(), (following - timedelta(days=1)).isoformat()


def _day(text: str, field: str) -> str:
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise InvalidArgument("a day as YYYY-MM-DD", field=field) from None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def metric_provider(provider_id: str) -> str:
    """A provider as a bounded metric label: its built-in id, or ``custom``."""
    return provider_id if provider_id in ("anthropic", "openai", "openrouter") else "custom"


def usd(micros: int) -> str:
    """US dollar millionths as an exact decimal string."""
    return str((Decimal(micros) / MICROS).quantize(Decimal("0.000001")))


def shown(micros: int, settings: UsageSettings) -> str:
    """A cost in the team's currency at its rate, to four decimal places."""
    value = Decimal(micros) / MICROS * settings.rate
    return str(value.quantize(Decimal("0.0001"), rounding=ROUND_HALF_EVEN))


def safe_cell(value: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that starts like a formula is prefixed
    with a single quote (OWASP's advice on CSV injection)."""
    return "'" + value if value.startswith(_FORMULA_STARTS) else value


def report_csv(report: UsageReport) -> str:
    """The report as CSV: one line per group, costs in USD and in the team's currency (empty
    when none of a group's requests had a price)."""
    currency = report.settings.currency
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(
        [
            *report.group_by,
            "requests",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
            "cost_usd",
            f"cost_{currency.lower()}",
            "unpriced_requests",
        ]
    )
    for t in report.totals:
        priced = t.requests > t.unpriced_requests
        writer.writerow(
            [
                *(safe_cell(t.key[name]) for name in report.group_by),
                t.requests,
                t.input_tokens,
                t.output_tokens,
                t.cache_read_tokens,
                t.cache_write_tokens,
                t.reasoning_tokens,
                usd(t.cost_micros) if priced else "",
                shown(t.cost_micros, report.settings) if priced else "",
                t.unpriced_requests,
            ]
        )
    return out.getvalue()
