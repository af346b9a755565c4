"""``usage-v1``: what the team's model requests used and cost, its own prices and its
currency.

Owners and admins read the whole team's use (or one member's); a member reads their own
use only, whichever member they name. Days are calendar days in the team's time zone.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.common.protocol.ids import ProviderId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.usage import UsageReport, UsageSettings, report_csv, shown, usd
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.usage import PriceRow

routes = HostRouteTable("usage-v1")

GroupName = Literal["agent", "member", "provider", "model", "routine", "day"]
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")]
Ref = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[0-9a-f]{32}$")]
PriceText = Annotated[str, Field(min_length=1, max_length=32)]


class UsageQuery(InboundModel):
    from_day: Day | None = Field(
        default=None, alias="from", description="First day; the month's first by default."
    )
    to_day: Day | None = Field(default=None, alias="to", description="Last day; today by default.")
    by: list[GroupName] = Field(default_factory=list, max_length=6)
    account_id: Ref | None = Field(
        default=None, description="One member's use (owners and admins; a member gets their own)."
    )


class SeriesQuery(InboundModel):
    from_day: Day | None = Field(default=None, alias="from")
    to_day: Day | None = Field(default=None, alias="to")
    stack_by: GroupName | None = Field(default=None, description="A second key within each day.")
    account_id: Ref | None = None


class UsageRow(WireModel):
    key: dict[str, str] = Field(description="The group's values by group name ('' for none).")
    requests: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    cost_usd: str | None = Field(description="Exact US dollars of the priced requests; null: none.")
    cost: str | None = Field(description="The same in the team's currency, at its rate.")
    unpriced_requests: int = Field(description="Requests whose model has no price.")


class UsageAnswer(WireModel):
    from_day: str = Field(alias="from")
    to_day: str = Field(alias="to")
    by: list[str]
    time_zone: str
    currency: str
    rows: list[UsageRow]


class CsvAnswer(WireModel):
    filename: str
    csv: str


class PriceView(WireModel):
    id: str
    provider_id: str
    model: str
    valid_from: float
    input: str
    output: str
    cache_read: str
    cache_write: str


class PriceList(WireModel):
    prices: list[PriceView]


class SetPrice(InboundModel):
    provider_id: ProviderId
    model: Annotated[str, Field(min_length=1, max_length=200)]
    input: PriceText = Field(description="US dollars per million input tokens.")
    output: PriceText
    cache_read: PriceText
    cache_write: PriceText
    valid_from: Annotated[float, Field(ge=0)] | None = Field(
        default=None, description="From when (seconds since the epoch); now by default."
    )


class DeletePrice(InboundModel):
    id: Ref


class PriceDeleted(WireModel):
    deleted: bool


class SettingsView(WireModel):
    time_zone: str
    currency: str
    rate: str = Field(description="Units of the currency per US dollar.")


class SetSettings(InboundModel):
    time_zone: Annotated[str, Field(min_length=1, max_length=64)]
    currency: Annotated[str, Field(min_length=3, max_length=3)]
    rate: Annotated[str, Field(min_length=1, max_length=32)]


def _answer(report: UsageReport) -> UsageAnswer:
    settings = report.settings
    rows = []
    for t in report.totals:
        priced = t.requests > t.unpriced_requests
        rows.append(
            UsageRow(
                key=t.key,
                requests=t.requests,
                input_tokens=t.input_tokens,
                output_tokens=t.output_tokens,
                cache_read_tokens=t.cache_read_tokens,
                cache_write_tokens=t.cache_write_tokens,
                reasoning_tokens=t.reasoning_tokens,
                cost_usd=usd(t.cost_micros) if priced else None,
                cost=shown(t.cost_micros, settings) if priced else None,
                unpriced_requests=t.unpriced_requests,
            )
        )
    return UsageAnswer(
        from_day=report.first_day,
        to_day=report.last_day,
        by=list(report.group_by),
        time_zone=settings.time_zone,
        currency=settings.currency,
        rows=rows,
    )


def _settings_view(s: UsageSettings) -> SettingsView:
    return SettingsView(time_zone=s.time_zone, currency=s.currency, rate=str(s.rate))


def _price_view(p: PriceRow) -> PriceView:
    return PriceView(
        id=p.id,
        provider_id=p.provider_id,
        model=p.model,
        valid_from=p.valid_from,
        input=p.input,
        output=p.output,
        cache_read=p.cache_read,
        cache_write=p.cache_write,
    )


@routes.route("usage-v1/summary", args=UsageQuery, least_role=Role.MEMBER)
async def summary(call: HostCall, args: UsageQuery) -> UsageAnswer:
    """Tokens and cost over a range of days, grouped by any of the keys."""
    report = await call.host.usage.summary(
        call.member, args.from_day, args.to_day, args.by, account_id=args.account_id
    )
    return _answer(report)


@routes.route("usage-v1/series", args=SeriesQuery, least_role=Role.MEMBER)
async def series(call: HostCall, args: SeriesQuery) -> UsageAnswer:
    """Tokens and cost per day of the range (every day listed), stacked by one key."""
    report = await call.host.usage.series(
        call.member, args.from_day, args.to_day, args.stack_by, account_id=args.account_id
    )
    return _answer(report)


@routes.route("usage-v1/csv", args=UsageQuery, least_role=Role.MEMBER)
async def export_csv(call: HostCall, args: UsageQuery) -> CsvAnswer:
    """The summary as CSV; a cell that starts like a formula is prefixed with a quote."""
    report = await call.host.usage.summary(
        call.member, args.from_day, args.to_day, args.by, account_id=args.account_id
    )
    name = f"usage-{report.first_day}-{report.last_day}.csv"
    return CsvAnswer(filename=name, csv=report_csv(report))


@routes.route("usage-v1/prices-list", args=NoArgs, least_role=Role.MEMBER)
async def list_prices(call: HostCall, _args: NoArgs) -> PriceList:
    """The team's own prices, each with the moment it applies from."""
    return PriceList(
        prices=[_price_view(p) for p in await call.host.usage.list_prices(call.member.team_id)]
    )


@routes.route("usage-v1/prices-set", args=SetPrice, least_role=Role.ADMIN)
async def set_price(call: HostCall, args: SetPrice) -> PriceView:
    """The team's price of a model (US dollars per million tokens of each kind)."""
    row = await call.host.usage.set_price(
        call.member,
        args.provider_id,
        args.model,
        {
            "input": args.input,
            "output": args.output,
            "cache_read": args.cache_read,
            "cache_write": args.cache_write,
        },
        args.valid_from,
    )
    return _price_view(row)


@routes.route("usage-v1/prices-delete", args=DeletePrice, least_role=Role.ADMIN)
async def delete_price(call: HostCall, args: DeletePrice) -> PriceDeleted:
    """Remove one of the team's prices; recorded costs stay as they were."""
    await call.host.usage.delete_price(call.member.team_id, args.id)
    return PriceDeleted(deleted=True)


@routes.route("usage-v1/settings-get", args=NoArgs, least_role=Role.MEMBER)
async def get_settings(call: HostCall, _args: NoArgs) -> SettingsView:
    """The team's time zone and the currency its costs are shown in."""
    return _settings_view(await call.host.usage.settings_of(call.member.team_id))


@routes.route("usage-v1/settings-set", args=SetSettings, least_role=Role.ADMIN)
async def set_settings(call: HostCall, args: SetSettings) -> SettingsView:
    """Set the team's time zone, currency and rate (units per US dollar)."""
    settings = await call.host.usage.set_settings(
        call.member.team_id, args.time_zone, args.currency, args.rate
    )
    return _settings_view(settings)
