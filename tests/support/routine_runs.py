"""A stand-in for the routines service as webhook triggers use it (``RoutineRuns``)."""

from __future__ import annotations

import asyncio
from typing import Any

from server.common.errors import Forbidden
from server.common.roles import Role
from server.host.services.workspace import Member


class RecordingRuns:
    """Starts nothing; remembers each run it was asked to start."""

    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []
        self.queue: asyncio.Queue[str] = asyncio.Queue()

    async def check_may_manage(self, member: Member, routine_id: str) -> None:
        if not member.role.at_least(Role.ADMIN):
            raise Forbidden("not yours")

    async def start_from_delivery(
        self, team_id: str, routine_id: str, *, delivery_id: str, body: str, received_at: float
    ) -> None:
        self.started.append(
            {"team_id": team_id, "routine_id": routine_id, "delivery_id": delivery_id, "body": body}
        )
        self.queue.put_nowait(delivery_id)

    async def next_run(self) -> str:
        return await asyncio.wait_for(self.queue.get(), 20)
