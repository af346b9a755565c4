"""Learn from my browsing: the steps a person takes in an agent's tab, kept for the agent's
next memory review.

A team turns it on (off by default). Each agent keeps its newest ``MAX_STEPS_PER_AGENT``
steps; a review reads them, secrets blanked, and they are deleted; steps no review read
expire after ``STEP_DAYS`` days. Turning the setting off, or deleting the agent, deletes
them. What a step holds is decided where it is seen (``live.steps``): a page's host, path
and title, or a control's role and name; never a value typed or a key pressed.

A step taken in the tab of a member's private thread is that member's: the review makes
memories of it for that member alone. A step in a shared thread's tab, or a tab no thread
owns, is the team's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from server.common.clock import Clock
from server.common.redaction import redact
from server.db.engine import Database
from server.host.rtc.revocations import MemberRemoved
from server.host.storage.browsing_steps import BrowsingStep, BrowsingStepRepository
from server.host.storage.threads import ThreadRepository

MAX_STEPS_PER_AGENT = 80
STEP_DAYS = 30
MAX_STEP_CHARS = 1000


@dataclass(frozen=True, slots=True)
class ReviewStep:
    """One unread step as a review reads it, secrets blanked."""

    id: str
    line: str
    # The member whose private thread's tab it was taken in; None: the team's.
    member_id: str | None


class BrowsingStepService:
    """The team setting and the agents' recorded steps, in the host's database."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock
        self._repo = BrowsingStepRepository()
        self._threads = ThreadRepository()

    async def is_enabled(self, team_id: str) -> bool:
        async with self._db.read() as conn:
            return await self._repo.get_enabled(conn, team_id)

    async def set_enabled(self, team_id: str, enabled: bool) -> bool:
        """Turn recording on or off for the team; off deletes every step it holds."""
        async with self._db.write() as conn:
            await self._repo.set_enabled(conn, team_id, enabled, self._clock.now())
            if not enabled:
                await self._repo.remove_team_steps(conn, team_id)
        return enabled

    async def record(
        self, team_id: str, agent_id: str, line: str, *, thread_id: str | None = None
    ) -> bool:
        """Keep one step for the agent when the team records them; whether it was kept.

        ``thread_id`` is the thread owning the tab: a private thread's step is its member's,
        and a step of a thread that is gone (its privacy unknown) is not kept."""
        now = self._clock.now()
        line = redact(line)[:MAX_STEP_CHARS]
        async with self._db.write() as conn:
            if not await self._repo.get_enabled(conn, team_id):
                return False
            member_id = None
            if thread_id is not None:
                thread = await self._threads.get_thread(conn, team_id, thread_id)
                if thread is None:
                    return False
                member_id = None if thread.shared else thread.created_by
            step = BrowsingStep(uuid.uuid4().hex, team_id, agent_id, line, now, member_id)
            # Steps no review read expire even for an agent that is never reviewed.
            await self._repo.remove_steps_before(conn, team_id, agent_id, _expiry(now))
            await self._repo.add_step(conn, step, keep=MAX_STEPS_PER_AGENT)
        return True

    async def steps_for_review(self, team_id: str, agent_id: str) -> list[ReviewStep]:
        """The agent's unread steps, oldest first, secrets blanked; the expired ones are
        forgotten first."""
        expired = _expiry(self._clock.now())
        async with self._db.write() as conn:
            await self._repo.remove_steps_before(conn, team_id, agent_id, expired)
            steps = await self._repo.list_steps(conn, team_id, agent_id, since=expired)
        return [ReviewStep(step.id, redact(step.line), step.member_id) for step in steps]

    async def member_removed(self, signal: MemberRemoved) -> None:
        """A member left the team: the steps taken in their private threads' tabs go, so no
        review makes memories of them for someone who left."""
        async with self._db.write() as conn:
            await self._repo.remove_member_steps(conn, signal.team_id, signal.account_id)

    async def remove_read_steps(self, team_id: str, agent_id: str, ids: Sequence[str]) -> None:
        async with self._db.write() as conn:
            await self._repo.remove_steps(conn, team_id, agent_id, ids)

    async def remove_agent_steps(self, team_id: str, agent_id: str) -> None:
        """Forget every step of an agent (the agent is being deleted)."""
        async with self._db.write() as conn:
            await self._repo.remove_agent_steps(conn, team_id, agent_id)


def _expiry(now: float) -> float:
    """Steps recorded at or before this moment have expired."""
    return now - STEP_DAYS * 86_400
