"""Model requests and their daily rollups, team prices, usage settings and budgets: the rows
of ``model_requests``, ``usage_rollups``, ``usage_prices``, ``usage_settings`` and
``budgets``; every query names the team.

A request's row and its rollup change in one transaction (``add_request``): reports read
the rollups only, never the requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.tables import budgets, model_requests, usage_prices, usage_rollups, usage_settings

TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
# What a report may group by, and the rollup column of each.
GROUP_COLUMNS = {
    "agent": "agent_id",
    "member": "account_id",
    "provider": "provider_id",
    "model": "model",
    "routine": "routine_id",
    "day": "day",
}
_KEY = ("team_id", "day", "agent_id", "account_id", "provider_id", "model", "routine_id")
_SUMMED = ("requests", *TOKEN_KINDS, "cost_micros", "unpriced_requests")


@dataclass(frozen=True, slots=True)
class ModelRequestRow:
    """One model request. ``account_id`` and ``routine_id`` are '' when there is none;
    ``cost_micros`` (USD millionths) is None when the model has no price."""

    id: str
    team_id: str
    agent_id: str
    thread_id: str | None
    turn_id: str | None
    account_id: str
    routine_id: str
    provider_id: str
    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    latency_ms: int
    status: str
    cost_micros: int | None
    at: float
    day: str

    def rollup(self) -> dict[str, Any]:
        """The rollup row this request adds to, with this request's share."""
        values = {name: getattr(self, name) for name in (*_KEY, *TOKEN_KINDS)}
        values["requests"] = 1
        values["cost_micros"] = self.cost_micros or 0
        values["unpriced_requests"] = 1 if self.cost_micros is None else 0
        return values


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Sums of a group of requests; ``key`` holds the group's values by group name."""

    key: dict[str, str]
    requests: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_micros: int
    unpriced_requests: int


@dataclass(frozen=True, slots=True)
class PriceRow:
    """A team's price for one model from ``valid_from`` on: USD per million tokens."""

    id: str
    team_id: str
    provider_id: str
    model: str
    valid_from: float
    input: str
    output: str
    cache_read: str
    cache_write: str
    created_by: str
    created_at: float


@dataclass(frozen=True, slots=True)
class UsageSettingsRow:
    team_id: str
    time_zone: str
    currency: str
    rate: str
    updated_at: float


@dataclass(frozen=True, slots=True)
class BudgetRow:
    """A budget. ``amount`` is USD millionths for unit ``cost``, tokens for ``tokens``."""

    id: str
    team_id: str
    name: str
    scope: str
    target_id: str
    period: str
    first_day: str | None
    last_day: str | None
    unit: str
    amount: int
    warned_period: str | None
    created_by: str
    updated_by: str
    created_at: float
    updated_at: float


def _upsert(conn: AsyncConnection, table: sa.Table) -> Any:
    return (postgresql if conn.dialect.name == "postgresql" else sqlite).insert(table)


def _rollup_upsert(dialect: str) -> Any:
    """The statement that adds a request's share to its rollup row, built once per dialect
    (recording runs it at every model request)."""
    insert = (postgresql if dialect == "postgresql" else sqlite).insert(usage_rollups)
    return insert.on_conflict_do_update(
        index_elements=list(_KEY),
        set_={name: usage_rollups.c[name] + insert.excluded[name] for name in _SUMMED},
    )


_ROLLUP_UPSERTS = {name: _rollup_upsert(name) for name in ("sqlite", "postgresql")}
_ADD_REQUEST = model_requests.insert()


class UsageRepository:
    """Reads and writes of the usage tables; every query names the team."""

    # -- requests and rollups ------------------------------------------------------------

    async def add_requests(self, conn: AsyncConnection, rows: Sequence[ModelRequestRow]) -> None:
        """The requests' rows, and their sums added to their rollup rows (made when new)."""
        await conn.execute(_ADD_REQUEST, [asdict(row) for row in rows])
        summed: dict[tuple[str, ...], dict[str, Any]] = {}
        for row in rows:
            share = row.rollup()
            key = tuple(share[name] for name in _KEY)
            total = summed.get(key)
            if total is None:
                summed[key] = share
            else:
                for name in _SUMMED:
                    total[name] += share[name]
        await self.add_rollups(conn, list(summed.values()))

    async def add_rollups(self, conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
        """Add each row's sums to its rollup row (made when new)."""
        await conn.execute(_ROLLUP_UPSERTS[conn.dialect.name], list(rows))

    async def list_totals(
        self,
        conn: AsyncConnection,
        team_id: str,
        first_day: str,
        last_day: str,
        group_by: Sequence[str],
        *,
        account_id: str | None = None,
    ) -> list[UsageTotals]:
        """Sums over the days ``first_day``..``last_day`` (inclusive), one per group;
        only ``account_id``'s when given."""
        keys = [usage_rollups.c[GROUP_COLUMNS[name]] for name in group_by]
        sums = [sa.func.coalesce(sa.func.sum(usage_rollups.c[n]), 0).label(n) for n in _SUMMED]
        query = (
            sa.select(*keys, *sums)
            .where(
                usage_rollups.c.team_id == team_id,
                usage_rollups.c.day >= first_day,
                usage_rollups.c.day <= last_day,
            )
            .group_by(*keys)
            .order_by(*keys)
        )
        if account_id is not None:
            query = query.where(usage_rollups.c.account_id == account_id)
        result = await conn.execute(query)
        totals = []
        for row in result:
            values: dict[str, Any] = dict(row._mapping)
            if not group_by and not values["requests"]:
                continue
            totals.append(
                UsageTotals(
                    key={name: values[GROUP_COLUMNS[name]] for name in group_by},
                    **{name: int(values[name]) for name in _SUMMED},
                )
            )
        return totals

    async def get_spent(
        self,
        conn: AsyncConnection,
        team_id: str,
        first_day: str,
        last_day: str,
        column: str | None,
        target_id: str,
    ) -> tuple[int, int]:
        """(tokens, USD millionths) spent over the days, by ``column == target_id`` (all of
        the team's when ``column`` is None). Tokens are input plus output."""
        query = sa.select(
            sa.func.coalesce(
                sa.func.sum(usage_rollups.c.input_tokens + usage_rollups.c.output_tokens), 0
            ),
            sa.func.coalesce(sa.func.sum(usage_rollups.c.cost_micros), 0),
        ).where(
            usage_rollups.c.team_id == team_id,
            usage_rollups.c.day >= first_day,
            usage_rollups.c.day <= last_day,
        )
        if column is not None:
            query = query.where(usage_rollups.c[column] == target_id)
        row = (await conn.execute(query)).one()
        return int(row[0]), int(row[1])

    async def list_request_times(
        self, conn: AsyncConnection, team_id: str
    ) -> list[tuple[str, float]]:
        """(id, time) of every request of the team (a new time zone recounts their days)."""
        result = await conn.execute(
            sa.select(model_requests.c.id, model_requests.c.at).where(
                model_requests.c.team_id == team_id
            )
        )
        return [(row.id, row.at) for row in result]

    async def update_days(
        self, conn: AsyncConnection, team_id: str, days: Iterable[tuple[str, str]]
    ) -> None:
        """Set each request's day ((id, day) pairs), then rebuild the team's rollups from
        its requests."""
        statement = (
            model_requests.update()
            .where(
                model_requests.c.team_id == team_id,
                model_requests.c.id == sa.bindparam("request_id"),
            )
            .values(day=sa.bindparam("new_day"))
        )
        batch = [{"request_id": i, "new_day": d} for i, d in days]
        if batch:
            await conn.execute(statement, batch)
        await conn.execute(usage_rollups.delete().where(usage_rollups.c.team_id == team_id))
        r = model_requests.c
        keys = [r[name] for name in _KEY]
        query = (
            sa.select(
                *keys,
                sa.func.count().label("requests"),
                *(sa.func.sum(r[name]).label(name) for name in TOKEN_KINDS),
                sa.func.coalesce(sa.func.sum(r.cost_micros), 0).label("cost_micros"),
                sa.func.sum(sa.case((r.cost_micros.is_(None), 1), else_=0)).label(
                    "unpriced_requests"
                ),
            )
            .where(r.team_id == team_id)
            .group_by(*keys)
        )
        await conn.execute(usage_rollups.insert().from_select([*_KEY, *_SUMMED], query))

    # -- settings ------------------------------------------------------------------------

    async def get_settings(self, conn: AsyncConnection, team_id: str) -> UsageSettingsRow | None:
        row = (
            await conn.execute(sa.select(usage_settings).where(usage_settings.c.team_id == team_id))
        ).first()
        return None if row is None else UsageSettingsRow(**row._mapping)

    async def update_settings(self, conn: AsyncConnection, row: UsageSettingsRow) -> None:
        insert = _upsert(conn, usage_settings)
        values = asdict(row)
        await conn.execute(
            insert.values(**values).on_conflict_do_update(
                index_elements=["team_id"],
                set_={k: v for k, v in values.items() if k != "team_id"},
            )
        )

    # -- prices --------------------------------------------------------------------------

    async def list_prices(self, conn: AsyncConnection, team_id: str) -> list[PriceRow]:
        result = await conn.execute(
            sa.select(usage_prices)
            .where(usage_prices.c.team_id == team_id)
            .order_by(usage_prices.c.provider_id, usage_prices.c.model, usage_prices.c.valid_from)
        )
        return [PriceRow(**row._mapping) for row in result]

    async def add_price(self, conn: AsyncConnection, row: PriceRow) -> None:
        """The price, replacing one of the same model from the same moment."""
        await conn.execute(
            usage_prices.delete().where(
                usage_prices.c.team_id == row.team_id,
                usage_prices.c.provider_id == row.provider_id,
                usage_prices.c.model == row.model,
                usage_prices.c.valid_from == row.valid_from,
            )
        )
        await conn.execute(usage_prices.insert().values(**asdict(row)))

    async def remove_price(self, conn: AsyncConnection, team_id: str, price_id: str) -> bool:
        result = await conn.execute(
            usage_prices.delete().where(
                usage_prices.c.team_id == team_id, usage_prices.c.id == price_id
            )
        )
        return bool(result.rowcount)

    # -- budgets -------------------------------------------------------------------------

    async def list_budgets(self, conn: AsyncConnection, team_id: str) -> list[BudgetRow]:
        result = await conn.execute(
            sa.select(budgets).where(budgets.c.team_id == team_id).order_by(budgets.c.created_at)
        )
        return [BudgetRow(**row._mapping) for row in result]

    async def get_budget(
        self, conn: AsyncConnection, team_id: str, budget_id: str
    ) -> BudgetRow | None:
        row = (
            await conn.execute(
                sa.select(budgets).where(budgets.c.team_id == team_id, budgets.c.id == budget_id)
            )
        ).first()
        return None if row is None else BudgetRow(**row._mapping)

    async def add_budget(self, conn: AsyncConnection, row: BudgetRow) -> None:
        await conn.execute(budgets.insert().values(**asdict(row)))

    async def update_budget(self, conn: AsyncConnection, row: BudgetRow) -> None:
        values = {k: v for k, v in asdict(row).items() if k not in ("id", "team_id")}
        await conn.execute(
            budgets.update()
            .where(budgets.c.team_id == row.team_id, budgets.c.id == row.id)
            .values(**values)
        )

    async def remove_budget(self, conn: AsyncConnection, team_id: str, budget_id: str) -> bool:
        result = await conn.execute(
            budgets.delete().where(budgets.c.team_id == team_id, budgets.c.id == budget_id)
        )
        return bool(result.rowcount)

    async def update_warned(
        self, conn: AsyncConnection, team_id: str, budget_id: str, period: str
    ) -> bool:
        """Mark the budget warned for ``period``; False when it was already (its notice went
        out once, whoever asks at the same moment)."""
        result = await conn.execute(
            budgets.update()
            .where(
                budgets.c.team_id == team_id,
                budgets.c.id == budget_id,
                sa.or_(budgets.c.warned_period.is_(None), budgets.c.warned_period != period),
            )
            .values(warned_period=period)
        )
        return bool(result.rowcount)
