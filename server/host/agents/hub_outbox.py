"""Messages from the host's services to its hub, sent over the link while it is up."""

from __future__ import annotations

import asyncio

from server.common.protocol.link import LinkHookRegister, LinkHookRemove, LinkMcpToolUsed

OutboxMessage = LinkHookRegister | LinkHookRemove | LinkMcpToolUsed


class HubOutbox:
    """A queue the link drains while linked. What is queued while unlinked is dropped when
    the link returns: it then sends the whole state (``hook-sync``) instead."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[OutboxMessage] = asyncio.Queue(maxsize=10_000)

    def put(self, message: OutboxMessage) -> None:
        if self._queue.full():  # unlinked for long: the next link's sync covers it
            self._queue.get_nowait()
        self._queue.put_nowait(message)

    async def get(self) -> OutboxMessage:
        return await self._queue.get()

    def clear(self) -> None:
        while not self._queue.empty():
            self._queue.get_nowait()
