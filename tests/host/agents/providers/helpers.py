"""Helpers for the provider tests: a recorded sleep, a stream reader, a tool."""

from __future__ import annotations

import asyncio

from server.host.agents.providers.events import StreamEvent
from server.host.agents.providers.stream import ModelStream
from server.host.agents.providers.transcript import ToolSpec


class RecordedSleep:
    """Stands in for asyncio.sleep: remembers each wait and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


async def read_all(stream: ModelStream) -> list[StreamEvent]:
    """Every event of ``stream``, read to its end."""
    async with stream:
        return [event async for event in stream]


READ_PAGE = ToolSpec(
    name="read_page",
    description="Reads the page.",
    input_schema={"type": "object", "properties": {"selector": {"type": "string"}}},
)
