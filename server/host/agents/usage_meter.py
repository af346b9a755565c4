"""The meter of model requests: budgets checked before each model request, each request
recorded after it (a failed record is logged; the turn goes on).

Each request holds its estimate against the budgets from its check until it is recorded
(``requested``), or until ``release`` (a request that failed or was cancelled before it
could be recorded), or at the latest until the task that asked ends: no hold outlives
its request's task.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from server.host.agents.budgets import BudgetHold, BudgetService, Spender
from server.host.agents.providers.events import Usage
from server.host.agents.usage import RequestFor, UsageService
from server.host.agents.usage_prices import Tokens

log = logging.getLogger(__name__)

# The output a request is expected to write when its caller does not give its cap: the
# turn loop's cap on one reply (``TurnSetup.max_tokens``).
ASSUMED_OUTPUT_TOKENS = 4096


class UsageMeters:
    """Makes each turn's meter, and checks budgets before a turn or a run starts."""

    def __init__(self, usage: UsageService, budgets: BudgetService) -> None:
        self._usage = usage
        self._budgets = budgets

    async def check_start(self, who: RequestFor) -> None:
        """``budgetExceeded`` when a budget that concerns a new turn is spent."""
        await self._budgets.check(_spender(who))

    def for_turn(self, who: RequestFor) -> TurnMeter:
        """The meter of ``who``'s requests: a turn's, or a memory review's."""
        return TurnMeter(self._usage, self._budgets, who)


class TurnMeter:
    """One turn's meter (``turn_loop.RequestMeter``), also lent to the turn's tools that ask
    the model (a web tool's ``prompt``). Its requests run one at a time in each task."""

    def __init__(self, usage: UsageService, budgets: BudgetService, who: RequestFor) -> None:
        self._usage = usage
        self._budgets = budgets
        self._who = who
        # The hold of the request under way in each task that asked.
        self._holds: dict[asyncio.Task[Any], BudgetHold] = {}

    async def before_request(self, estimated_input: int, max_output: int | None = None) -> None:
        """``budgetExceeded`` when a budget is spent; else the request holds its estimated
        input and ``max_output`` (``ASSUMED_OUTPUT_TOKENS`` when not given) until it is
        recorded."""
        self.release()  # an earlier request of this task that was never recorded
        output = ASSUMED_OUTPUT_TOKENS if max_output is None else max_output
        hold = await self._budgets.hold(_spender(self._who), estimated_input, output)
        task = asyncio.current_task()
        if not hold.amounts or task is None:
            return
        self._holds[task] = hold
        task.add_done_callback(self._task_ended)

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
        finally:
            # Recorded (or never to be): what it spent now counts in place of its estimate.
            self.release()

    def release(self) -> None:
        """The request under way in this task holds nothing more (recorded, failed or
        cancelled); nothing when it holds nothing."""
        task = asyncio.current_task()
        hold = None if task is None else self._holds.pop(task, None)
        if task is None or hold is None:
            return
        task.remove_done_callback(self._task_ended)
        self._budgets.release(hold)

    def _task_ended(self, task: asyncio.Task[Any]) -> None:
        hold = self._holds.pop(task, None)
        if hold is not None:
            self._budgets.release(hold)


def _spender(who: RequestFor) -> Spender:
    return Spender(
        who.team_id, who.agent_id, who.account_id, who.routine_id, who.provider_id, who.model
    )
