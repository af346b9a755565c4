"""The loopback relay serves a bounded number of browser connections at once, and says
why an exit refused a connection."""

from __future__ import annotations

import asyncio
import base64
import contextlib

import pytest

from server.host.proxies.exits import ExitRefused, Upstream
from server.host.proxies.relay import LoopbackRelay


class SilentExit:
    """An exit whose connections never open: each browser connection stays in the relay."""

    def __init__(self) -> None:
        self.opening = 0
        self.both_waiting = asyncio.Event()

    async def open(self, host: str, port: int) -> Upstream:
        self.opening += 1
        if self.opening == 2:
            self.both_waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("never opens")


Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def connect_through(
    relay: LoopbackRelay, request: str = "CONNECT example.test:443"
) -> Streams:
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    sign_in = base64.b64encode(f"{relay.username}:{relay.password}".encode()).decode()
    head = f"{request} HTTP/1.1\r\nProxy-Authorization: Basic {sign_in}\r\n\r\n"
    writer.write(head.encode())
    await writer.drain()
    return reader, writer


async def test_a_connection_past_the_limit_is_answered_503_and_the_others_go_on() -> None:
    exit_ = SilentExit()
    async with LoopbackRelay(exit_, max_connections=2) as relay:
        held = [await connect_through(relay) for _ in range(2)]
        await asyncio.wait_for(exit_.both_waiting.wait(), 10)
        reader, writer = await connect_through(relay)
        answer = await asyncio.wait_for(reader.read(), 10)
        assert answer.startswith(b"HTTP/1.1 503 ")
        assert exit_.opening == 2  # the refused one never reached the exit
        writers = [writer] + [held_writer for _reader, held_writer in held]
        for each in writers:
            each.close()
        for each in writers:
            with contextlib.suppress(ConnectionError):
                await each.wait_closed()


class RefusingExit:
    """An exit (a member's computer) that refuses every target as not public."""

    async def open(self, host: str, port: int) -> Upstream:
        raise ExitRefused("target", "policy")


async def test_a_refused_target_is_answered_502_with_why_and_the_cause() -> None:
    async with LoopbackRelay(RefusingExit()) as relay:
        reader, writer = await connect_through(relay)
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
    head = answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
    assert head[0] == b"HTTP/1.1 502 Bad Gateway"
    assert b"X-Proxy-Refusal: target" in head
    assert b"X-Proxy-Refusal-Cause: policy" in head
    assert (relay.last_refusal, relay.last_cause) == ("target", "policy")


class OpenedExit:
    """An exit that notes each target it is asked for and refuses it."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, int]] = []

    async def open(self, host: str, port: int) -> Upstream:
        self.asked.append((host, port))
        raise ExitRefused("target", "policy")


@pytest.mark.parametrize(
    "request_line",
    [
        "CONNECT example.test:70000",
        "CONNECT example.test:0",
        "CONNECT example.test:4x3",
        "CONNECT [::1]:99999",
        "CONNECT " + "a" * 64 + ".test:443",
        "CONNECT x..y:443",
        "GET http://example.test:65536/",
        "GET http://:80/",
    ],
)
async def test_a_target_no_connection_could_be_opened_to_is_answered_400(
    request_line: str,
) -> None:
    exit_ = OpenedExit()
    async with LoopbackRelay(exit_) as relay:
        reader, writer = await connect_through(relay, request_line)
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 400 Bad Request")
    assert exit_.asked == []
