"""The queue of a thread: messages sent while its turn runs, taken when that turn ends.

A queued message is its sender's until a turn takes it: they may edit its text, cancel it,
or mark it to steer (given to the model at the running turn's next request instead of
starting the next turn). Each change is one typed event to the members who see the thread;
taking or cancelling a message removes it in one write, so it is taken or cancelled once.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import Conflict, NotFound
from server.common.protocol import events
from server.db.engine import Database
from server.host.agents.providers.transcript import Attachment, UserMessage
from server.host.storage.queued_messages import QueuedMessage, QueuedMessageRepository
from server.host.storage.threads import Thread

# The most messages a thread's queue holds.
MAX_QUEUED = 20

Emit = Callable[[Thread, events.HostEvent], None]


class MessageQueue:
    """Queued messages of every thread, in the database."""

    def __init__(self, db: Database, clock: Clock, emit: Emit) -> None:
        self._db = db
        self._clock = clock
        self._emit = emit
        self._repo = QueuedMessageRepository()

    async def add(self, thread: Thread, account_id: str, message: UserMessage) -> QueuedMessage:
        """Queue ``message`` of ``account_id`` behind the thread's running turn."""
        now = self._clock.now()
        queued = QueuedMessage(
            id=uuid.uuid4().hex,
            team_id=thread.team_id,
            thread_id=thread.id,
            account_id=account_id,
            text=message.text,
            attachments=json.dumps([a.model_dump(mode="json") for a in message.attachments]),
            steer=False,
            created_at=now,
            updated_at=now,
        )
        async with self._db.write() as conn:
            if await self._repo.count_messages(conn, thread.team_id, thread.id) >= MAX_QUEUED:
                raise Conflict(
                    f"a thread holds at most {MAX_QUEUED} queued messages; wait for the agent",
                    code="queueFull",
                )
            await self._repo.add_message(conn, queued)
        self._emit(thread, events.QueuedMessageAdded(thread_id=thread.id, queued=item(queued)))
        return queued

    async def list_queued(self, team_id: str, thread_id: str) -> list[QueuedMessage]:
        async with self._db.read() as conn:
            return await self._repo.list_messages(conn, team_id, thread_id)

    async def edit(
        self,
        thread: Thread,
        account_id: str,
        message_id: str,
        *,
        text: str | None = None,
        steer: bool | None = None,
    ) -> QueuedMessage:
        """Change the text of a queued message, or whether it steers; its sender only."""
        async with self._db.write() as conn:
            queued = await self._sender_message(conn, thread, account_id, message_id)
            now = self._clock.now()
            await self._repo.update_message(
                conn, thread.team_id, message_id, updated_at=now, text=text, steer=steer
            )
        changed = replace(
            queued,
            text=queued.text if text is None else text,
            steer=queued.steer if steer is None else steer,
            updated_at=now,
        )
        self._emit(thread, events.QueuedMessageUpdated(thread_id=thread.id, queued=item(changed)))
        return changed

    async def cancel(self, thread: Thread, account_id: str, message_id: str) -> None:
        """Take a queued message back; its sender only."""
        async with self._db.write() as conn:
            await self._sender_message(conn, thread, account_id, message_id)
            await self._repo.remove_message(conn, thread.team_id, message_id)
        self._emit(thread, events.QueuedMessageCancelled(thread_id=thread.id, id=message_id))

    async def remove_sender(self, team_id: str, account_id: str) -> list[QueuedMessage]:
        """A member left the team: none of their queued messages starts a turn (it would run
        as them). What was taken out, for the events."""
        async with self._db.write() as conn:
            return await self._repo.remove_sender_messages(conn, team_id, account_id)

    async def senders(self) -> dict[tuple[str, str], float]:
        """(team, account) of every member with a queued message, in every team, with when
        the oldest was queued."""
        async with self._db.read() as conn:
            return await self._repo.list_every_sender(conn)

    async def waiting_threads(self) -> list[tuple[str, str]]:
        """(team, thread) of every thread whose queue holds a message, in every team (a
        start: no turn runs to take them)."""
        async with self._db.read() as conn:
            return await self._repo.list_queued_threads(conn)

    async def take_next(self, thread: Thread, turn_id: str) -> QueuedMessage | None:
        """The oldest queued message, out of the queue, to start turn ``turn_id`` (its
        sender's turn: theirs is the spending)."""
        return next(iter(await self._take(thread, turn_id, steered_only=False, first=True)), None)

    async def take_steering(self, thread: Thread, turn_id: str) -> list[UserMessage]:
        """The messages marked to steer, oldest first, out of the queue into ``turn_id``."""
        taken = await self._take(thread, turn_id, steered_only=True, first=False)
        return [user_message(q) for q in taken]

    async def _take(
        self, thread: Thread, turn_id: str, *, steered_only: bool, first: bool
    ) -> list[QueuedMessage]:
        # Read first: at most model requests nothing steers, and a read takes no write lock.
        async with self._db.read() as conn:
            listed = await self._repo.list_messages(conn, thread.team_id, thread.id)
        wanted = [q for q in listed if q.steer or not steered_only][: 1 if first else None]
        taken: list[QueuedMessage] = []
        if not wanted:
            return []
        async with self._db.write() as conn:
            for listed_one in wanted:
                # As it is now: its sender may have edited, unsteered or cancelled it.
                queued = await self._repo.take_message(
                    conn, thread.team_id, listed_one.id, steered_only=steered_only
                )
                if queued is not None:
                    taken.append(queued)
        if first and not taken:
            # The oldest went meanwhile: the next oldest, if any.
            return await self._take(thread, turn_id, steered_only=steered_only, first=first)
        for queued in taken:
            self._emit(
                thread,
                events.QueuedMessageTaken(
                    thread_id=thread.id, id=queued.id, turn_id=turn_id, steered=steered_only
                ),
            )
        return taken

    async def _sender_message(
        self, conn: AsyncConnection, thread: Thread, account_id: str, message_id: str
    ) -> QueuedMessage:
        queued = await self._repo.get_message(conn, thread.team_id, message_id)
        if queued is None or queued.thread_id != thread.id or queued.account_id != account_id:
            raise NotFound(
                "no such queued message; a turn may have taken it", code="queuedMessageNotFound"
            )
        return queued


def user_message(queued: QueuedMessage) -> UserMessage:
    """The member's message as a turn reads it."""
    attachments = tuple(Attachment.model_validate(a) for a in json.loads(queued.attachments))
    return UserMessage(text=queued.text, attachments=attachments, account_id=queued.account_id)


def item(queued: QueuedMessage) -> events.QueuedMessageItem:
    """The queued message as members see it."""
    return events.QueuedMessageItem(
        id=queued.id,
        thread_id=queued.thread_id,
        account_id=queued.account_id,
        text=queued.text,
        attachments=[a["name"] for a in json.loads(queued.attachments)],
        steer=queued.steer,
        created_at=queued.created_at,
        updated_at=queued.updated_at,
    )
