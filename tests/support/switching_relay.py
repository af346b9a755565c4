"""A TCP relay on loopback whose target can be switched, and whose open paths can be cut on
one side only: what a host behind a load balancer sees when its path to one hub dies."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


@dataclass(eq=False)
class _Path:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    pumps: list[asyncio.Task[None]] = field(default_factory=list)


class SwitchingRelay:
    """Relays each new connection to the current ``target`` port on 127.0.0.1."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = 0
        self._paths: list[_Path] = []
        # Upstream sockets kept open after their client side was cut: the server on the
        # other end hears nothing, neither data nor a close, until the test ends them.
        self._silent: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        path = _Path(writer, up_writer)
        path.pumps = [
            asyncio.create_task(_pump(reader, up_writer)),
            asyncio.create_task(_pump(up_reader, writer)),
        ]
        self._paths.append(path)

    async def cut_client_sides(self) -> None:
        """Close every open path on the client's side only: the client sees its connection
        end at once; the server's side stays open and silent (see ``close_silent``)."""
        paths, self._paths = self._paths, []
        for path in paths:
            for pump in path.pumps:
                pump.cancel()
            for pump in path.pumps:
                with contextlib.suppress(asyncio.CancelledError):
                    await pump
            path.client.close()
            self._silent.append(path.upstream)

    def close_silent(self) -> None:
        """End the server sides ``cut_client_sides`` left open (as a dead path finally does)."""
        silent, self._silent = self._silent, []
        for writer in silent:
            writer.close()

    async def close(self) -> None:
        await self.cut_client_sides()
        self.close_silent()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    # Only when the other side ended: a cut (a cancel) leaves this side open.
    writer.close()


@asynccontextmanager
async def switching_relay(target: int) -> AsyncIterator[SwitchingRelay]:
    """A relay to ``target`` on a free loopback port (``relay.port``)."""
    relay = SwitchingRelay(target)
    relay._server = await asyncio.start_server(relay._accept, "127.0.0.1", 0)
    relay.port = relay._server.sockets[0].getsockname()[1]
    try:
        yield relay
    finally:
        await relay.close()
