"""A small SOCKS5 server (RFC 1928, RFC 1929 sign-in) that misbehaves on purpose.

``mode``: ``ok`` connects to the target like any proxy; ``refuse`` refuses every
sign-in; ``silent`` accepts the connection and never answers; ``unreachable`` answers
the connect request with "host unreachable". It counts the connections it took.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["ok", "refuse", "silent", "unreachable"]


@dataclass
class FaultySocks5:
    mode: Mode
    user: str = "user"
    password: str = "secret"
    port: int = 0
    connections: int = 0
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        try:
            await self._session(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mode == "silent":
            await reader.read()  # until the client gives up
            return
        _, count = await reader.readexactly(2)
        methods = await reader.readexactly(count)
        if 2 not in methods:
            writer.write(b"\x05\xff")
            return
        writer.write(b"\x05\x02")
        _, ulen = await reader.readexactly(2)
        user = (await reader.readexactly(ulen)).decode()
        (plen,) = await reader.readexactly(1)
        password = (await reader.readexactly(plen)).decode()
        good = self.mode != "refuse" and (user, password) == (self.user, self.password)
        writer.write(b"\x01\x00" if good else b"\x01\x01")
        if not good:
            return
        _, _, _, kind = await reader.readexactly(4)
        if kind == 3:
            (length,) = await reader.readexactly(1)
            host = (await reader.readexactly(length)).decode()
        else:
            packed = await reader.readexactly(4 if kind == 1 else 16)
            host = socket.inet_ntop(socket.AF_INET if kind == 1 else socket.AF_INET6, packed)
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if self.mode == "unreachable":
            writer.write(b"\x05\x04\x00\x01" + bytes(6))
            return
        target_reader, target_writer = await asyncio.open_connection(host, port)
        writer.write(b"\x05\x00\x00\x01" + bytes(6))

        async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
            with contextlib.suppress(OSError):
                sink.write_eof()

        try:
            await asyncio.gather(copy(reader, target_writer), copy(target_reader, writer))
        finally:
            target_writer.close()


@asynccontextmanager
async def faulty_socks5(mode: Mode) -> AsyncIterator[FaultySocks5]:
    fake = FaultySocks5(mode)
    server = await asyncio.start_server(fake.serve, "127.0.0.1", 0)
    fake.port = server.sockets[0].getsockname()[1]
    try:
        yield fake
    finally:
        server.close()
        for writer in list(fake._writers):
            writer.transport.abort()  # its session reads the end and returns
        with contextlib.suppress(Exception):
            await server.wait_closed()
