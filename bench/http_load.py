"""A low-overhead HTTP/1.1 load generator for the benchmarks: raw asyncio protocols.

Each client is one keep-alive connection with one request in flight. The request
is encoded once; an answer is recognised by its ``Content-Length`` alone, and
nothing else of it is parsed. That costs a few microseconds a request, where an
``aiohttp.ClientSession`` costs about as much CPU as the server spends answering,
which on a 2-core machine starves the server under test. The loop is uvloop's
when it is installed.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

_HEADER_END = b"\r\n\r\n"
_LENGTH = b"\r\ncontent-length:"


@dataclass(frozen=True)
class ClientPlan:
    """What one client sends, over and over: a pre-encoded request."""

    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def encode(self, host: str) -> bytes:
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: {host}"]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        if self.body or self.method not in ("GET", "HEAD"):
            lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + self.body


@dataclass
class WorkerResult:
    """What one client process measured."""

    latencies: list[float]
    statuses: dict[int, int]
    elapsed: float
    late_start: float
    cpu_seconds: float


class _Client(asyncio.Protocol):
    """One connection sending its request again as soon as the answer is complete."""

    def __init__(self, request: bytes, latencies: list[float], statuses: Counter[int]) -> None:
        self._request = request
        self._latencies = latencies
        self._statuses = statuses
        self._buffer = b""
        self._expected = -1
        self._status = 0
        self._started = 0.0
        self._deadline = 0.0
        self._record = False
        self._transport: asyncio.Transport | None = None
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment] # uvloop's is no asyncio.Transport
        self._send()  # one untimed request opens the connection before the clock

    def connection_lost(self, exc: Exception | None) -> None:
        error = ConnectionError(f"the server closed the connection ({exc})")
        for future in (self.ready, self.finished):
            if not future.done():
                future.set_exception(error)

    def run_until(self, deadline: float) -> None:
        self._deadline = deadline
        self._record = True
        self._send()

    def _send(self) -> None:
        assert self._transport is not None
        self._started = time.perf_counter()
        self._transport.write(self._request)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while True:
            if self._expected < 0:
                end = self._buffer.find(_HEADER_END)
                if end < 0:
                    return
                head = self._buffer[:end].lower()
                at = head.find(_LENGTH)
                if at < 0:
                    raise RuntimeError("an answer without Content-Length")
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + len(_LENGTH) : stop if stop >= 0 else None])
                self._status = int(head[9:12])
                self._expected = end + len(_HEADER_END) + length
            if len(self._buffer) < self._expected:
                return
            self._buffer = self._buffer[self._expected :]
            self._expected = -1
            self._answered(time.perf_counter())

    def _answered(self, now: float) -> None:
        if not self._record:
            self.ready.set_result(None)
            return
        self._latencies.append(now - self._started)
        self._statuses[self._status] += 1
        if now < self._deadline:
            self._send()
        elif not self.finished.done():
            self.finished.set_result(None)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def _run_clients(
    base: str, plans: Sequence[ClientPlan], start_at: float, seconds: float
) -> WorkerResult:
    where = urlsplit(base)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    loop = asyncio.get_running_loop()
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    clients: list[_Client] = []
    for plan in plans:
        request = plan.encode(f"{host}:{port}")
        _, client = await loop.create_connection(
            functools.partial(_Client, request, latencies, statuses), host, port
        )
        clients.append(client)
    try:
        await asyncio.gather(*(client.ready for client in clients))
        late_start = max(0.0, time.time() - start_at)
        await asyncio.sleep(max(0.0, start_at - time.time()))
        started, cpu_started = time.perf_counter(), time.process_time()
        for client in clients:
            client.run_until(started + seconds)
        await asyncio.gather(*(client.finished for client in clients))
        elapsed = time.perf_counter() - started
        cpu_seconds = time.process_time() - cpu_started
    finally:
        for client in clients:
            client.close()
    return WorkerResult(latencies, dict(statuses), elapsed, late_start, cpu_seconds)


def _run(main: Coroutine[Any, Any, WorkerResult]) -> WorkerResult:
    factory: Callable[[], asyncio.AbstractEventLoop] | None
    try:
        import uvloop

        factory = uvloop.new_event_loop
    except ImportError:
        factory = None
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def run_worker(
    base: str, plans: Sequence[ClientPlan], start_at: float, seconds: float
) -> WorkerResult:
    """Entry point of a client process: its clients start at ``start_at`` (wall clock)."""
    return _run(_run_clients(base, plans, start_at, seconds))
