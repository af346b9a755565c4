"""How many turns each team runs at once.

A host is shared: one team's fifty busy agents must not take every core and every
model request from another team's one agent. Each team has ``per_team`` places; a turn
past them waits, first come first served within its team, and takes the place of the
next turn of its team that ends. Teams never wait for each other.

A turn another of the team's turns asked for (``ask_agent``) runs on its caller's place:
the caller waits for it, so making it wait for a place too could hold every place with
callers waiting for their callees.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class _Team:
    running: int = 0
    waiting: deque[asyncio.Future[None]] = field(default_factory=deque)


class TurnSlots:
    """The places of each team's running turns (``per_team`` 0: no limit)."""

    def __init__(self, per_team: int) -> None:
        self._per_team = per_team
        self._teams: dict[str, _Team] = {}

    @property
    def per_team(self) -> int:
        return self._per_team

    def waiting(self, team_id: str | None = None) -> int:
        """Turns waiting for a place: the team's, or every team's."""
        teams = self._teams.values() if team_id is None else [self._teams.get(team_id, _Team())]
        return sum(len(team.waiting) for team in teams)

    def running(self, team_id: str) -> int:
        team = self._teams.get(team_id)
        return 0 if team is None else team.running

    @contextlib.asynccontextmanager
    async def place(
        self, team_id: str, on_wait: Callable[[int], None] = lambda ahead: None
    ) -> AsyncIterator[None]:
        """Hold one of the team's places while the block runs; when none is free, call
        ``on_wait`` with the number of the team's turns waiting before this one, then wait."""
        await self._take(team_id, on_wait)
        try:
            yield
        finally:
            self._give_back(team_id)

    async def _take(self, team_id: str, on_wait: Callable[[int], None]) -> None:
        team = self._teams.setdefault(team_id, _Team())
        if self._per_team <= 0 or (team.running < self._per_team and not team.waiting):
            team.running += 1
            return
        handed = asyncio.get_running_loop().create_future()
        team.waiting.append(handed)
        on_wait(len(team.waiting) - 1)
        try:
            await handed
        except asyncio.CancelledError:
            if handed.done() and not handed.cancelled():
                self._give_back(team_id)  # handed a place as it was stopped: pass it on
            else:
                # Cancelled while it waited; a turn that ended meanwhile may have passed it.
                with contextlib.suppress(ValueError):
                    team.waiting.remove(handed)
                self._forget_if_idle(team_id)
            raise

    def _give_back(self, team_id: str) -> None:
        """A turn ended: its place goes to the team's oldest waiting turn, or is free."""
        team = self._teams[team_id]
        while team.waiting:
            handed = team.waiting.popleft()
            if not handed.done():
                handed.set_result(None)  # the place passes on; ``running`` stays
                return
        team.running -= 1
        self._forget_if_idle(team_id)

    def _forget_if_idle(self, team_id: str) -> None:
        team = self._teams.get(team_id)
        if team is not None and team.running == 0 and not team.waiting:
            del self._teams[team_id]
