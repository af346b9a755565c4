"""The turn loop's meter: budgets checked before each model request, each request recorded
after it (a failed record is logged; the turn goes on)."""

from __future__ import annotations

import logging

from server.host.agents.budgets import BudgetService, Spender
from server.host.agents.providers.events import Usage
from server.host.agents.usage import RequestFor, UsageService
from server.host.agents.usage_prices import Tokens

log = logging.getLogger(__name__)


class UsageMeters:
    """Makes each turn's meter, and checks budgets before a turn or a run starts."""

    def __init__(self, usage: UsageService, budgets: BudgetService) -> None:
        self._usage = usage
        self._budgets = budgets

    async def check_start(self, who: RequestFor) -> None:
        """``budgetExceeded`` when a budget that concerns a new turn is spent."""
        await self._budgets.check(_spender(who))

    def for_turn(self, who: RequestFor) -> TurnMeter:
        return TurnMeter(self._usage, self._budgets, who)


class TurnMeter:
    """One turn's meter (``turn_loop.RequestMeter``)."""

    def __init__(self, usage: UsageService, budgets: BudgetService, who: RequestFor) -> None:
        self._usage = usage
        self._budgets = budgets
        self._who = who

    async def before_request(self, estimated_input: int) -> None:
        await self._budgets.check(_spender(self._who), estimated_input)

    async def requested(self, usage: Usage, seconds: float, *, ok: bool) -> None:
        tokens = Tokens(
            input=usage.input_tokens,
            output=usage.output_tokens,
            cache_read=usage.cache_read_tokens,
            cache_write=usage.cache_write_tokens,
            reasoning=usage.reasoning_tokens,
        )
        try:
            await self._usage.record(self._who, tokens, seconds, ok=ok)
        except Exception:
            # The request happened whatever the database says: the turn goes on.
            log.exception(
                "a model request could not be recorded", extra={"team_id": self._who.team_id}
            )


def _spender(who: RequestFor) -> Spender:
    return Spender(
        who.team_id, who.agent_id, who.account_id, who.routine_id, who.provider_id, who.model
    )
