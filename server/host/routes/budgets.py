"""``budgets-v1``: what the team, an agent, a member or a routine may spend per month (in
the team's time zone) or per custom range of days, in US dollars or tokens. Owners and
admins only."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.common.protocol.ids import BudgetTargetId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.budgets import BudgetSpec, BudgetState
from server.host.agents.usage import usd
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("budgets-v1")

Ref = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[0-9a-f]{32}$")]
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class BudgetFields(InboundModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    scope: Literal["team", "agent", "member", "routine"]
    target_id: BudgetTargetId | None = Field(
        default=None, description="The agent, member or routine; none for the team."
    )
    period: Literal["month", "custom"] = "month"
    first_day: Day | None = None
    last_day: Day | None = None
    unit: Literal["cost", "tokens"]
    amount: Annotated[str, Field(min_length=1, max_length=32)] = Field(
        description="US dollars (a decimal) for cost; a whole number for tokens."
    )

    def spec(self) -> BudgetSpec:
        return BudgetSpec(
            self.name,
            self.scope,
            self.target_id,
            self.period,
            self.first_day,
            self.last_day,
            self.unit,
            self.amount,
        )


class UpdateBudget(BudgetFields):
    id: Ref


class BudgetRef(InboundModel):
    id: Ref


class BudgetView(WireModel):
    id: str
    name: str
    scope: str
    target_id: str | None
    period: str
    first_day: str = Field(description="The current period's first day.")
    last_day: str
    unit: str
    amount: str = Field(description="US dollars, or tokens.")
    used: str = Field(description="Used in the current period, in the same unit.")
    percent: int


class BudgetList(WireModel):
    budgets: list[BudgetView]


class BudgetDeleted(WireModel):
    deleted: bool


def _view(state: BudgetState) -> BudgetView:
    b = state.budget
    show = usd if b.unit == "cost" else str
    return BudgetView(
        id=b.id,
        name=b.name,
        scope=b.scope,
        target_id=b.target_id or None,
        period=b.period,
        first_day=state.first_day,
        last_day=state.last_day,
        unit=b.unit,
        amount=show(b.amount),
        used=show(state.used),
        percent=int(state.fraction * 100),
    )


@routes.route("budgets-v1/list", args=NoArgs, least_role=Role.ADMIN)
async def list_budgets(call: HostCall, _args: NoArgs) -> BudgetList:
    """The team's budgets with what their current period has used."""
    states = await call.host.budgets.list_budgets(call.member.team_id)
    return BudgetList(budgets=[_view(s) for s in states])


@routes.route("budgets-v1/create", args=BudgetFields, least_role=Role.ADMIN)
async def create_budget(call: HostCall, args: BudgetFields) -> BudgetView:
    """A new budget."""
    return _view(await call.host.budgets.create_budget(call.member, args.spec()))


@routes.route("budgets-v1/update", args=UpdateBudget, least_role=Role.ADMIN)
async def update_budget(call: HostCall, args: UpdateBudget) -> BudgetView:
    """Change a budget (raising it lets refused turns start again)."""
    return _view(await call.host.budgets.update_budget(call.member, args.id, args.spec()))


@routes.route("budgets-v1/delete", args=BudgetRef, least_role=Role.ADMIN)
async def delete_budget(call: HostCall, args: BudgetRef) -> BudgetDeleted:
    """Remove a budget."""
    await call.host.budgets.delete_budget(call.member.team_id, args.id)
    return BudgetDeleted(deleted=True)
