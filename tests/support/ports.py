"""Ports for tests that need one nothing listens on, or wait for one to open."""

from __future__ import annotations

import asyncio
import socket


def closed_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


async def listening(port: int, host: str = "127.0.0.1", seconds: float = 30.0) -> None:
    """Returns once something accepts connections on ``port`` (a child server started)."""

    async def opens() -> bool:
        try:
            _reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            return False
        writer.close()
        return True

    async with asyncio.timeout(seconds):
        while not await opens():  # noqa: ASYNC110 - no event for a port that opens
            await asyncio.sleep(0.05)
