"""The egress multiplexer between two ends joined back to back (the channel's ordered
delivery is all it relies on): streams carry bytes both ways, a stalled stream never
stalls another and buffers at most one window, refusals and a lost channel end cleanly,
and the member's dialer refuses every non-public address by default."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

from peer.egress import TargetDialer
from server.common.egress import (
    EgressStream,
    Kind,
    Multiplexer,
    Refusal,
    StreamRefused,
    StreamReset,
    encode,
)
from server.common.public_addresses import PublicOnlyPolicy
from tests.support.resolvers import TableResolver
from tests.support.waiting import eventually

WINDOW = 64 * 1024


@dataclass
class Pair:
    host: Multiplexer
    member: Multiplexer
    accepted: asyncio.Queue[tuple[EgressStream, str, int]]


@asynccontextmanager
async def pair(
    accept: Callable[[Multiplexer, EgressStream, str, int], object] | None = None,
) -> AsyncIterator[Pair]:
    """Two multiplexers whose frames reach each other in order, one loop turn later."""
    loop = asyncio.get_running_loop()
    accepted: asyncio.Queue[tuple[EgressStream, str, int]] = asyncio.Queue()
    member: Multiplexer

    async def take(stream: EgressStream, host: str, port: int) -> None:
        if accept is not None:
            await accept(member, stream, host, port)  # type: ignore[misc]
            return
        member.accepted(stream)
        await accepted.put((stream, host, port))

    host = Multiplexer(lambda f: loop.call_soon(member.receive, f), window=WINDOW)
    member = Multiplexer(lambda f: loop.call_soon(host.receive, f), accept=take, window=WINDOW)
    yield Pair(host, member, accepted)
    host.close()
    member.close()


async def test_bytes_go_both_ways_and_close_ends_each_half() -> None:
    async with pair() as joined:
        stream = await joined.host.open("example.com", 443)
        far, host, port = await joined.accepted.get()
        assert (host, port) == ("example.com", 443)
        payload = bytes(range(256)) * 1000  # several windows
        writing = asyncio.ensure_future(stream.write(payload))
        received = bytearray()
        while len(received) < len(payload):
            received += await far.read(10_000)
        await writing
        assert bytes(received) == payload
        await far.write(b"answer")
        await far.close()
        assert await stream.read(100) == b"answer"
        assert await stream.read(100) == b""
        await stream.close()
        assert joined.host.open_streams == 0
        await eventually(lambda: joined.member.open_streams == 0)


async def test_a_stalled_stream_never_stalls_another_and_buffers_one_window() -> None:
    async with pair() as joined:
        stalled = await joined.host.open("stalled.example", 80)
        stalled_far, _, _ = await joined.accepted.get()
        flowing = await joined.host.open("flowing.example", 80)
        flowing_far, _, _ = await joined.accepted.get()

        blocked = asyncio.ensure_future(stalled.write(b"x" * (10 * WINDOW)))
        # Nobody reads the stalled stream: its writer runs out of credit and waits.
        await eventually(lambda: stalled._credit == 0)
        for n in range(50):
            message = f"message {n}".encode() * 100
            await flowing.write(message)
            got = bytearray()
            while len(got) < len(message):
                got += await flowing_far.read(len(message))
            assert bytes(got) == message
        assert not blocked.done()
        assert len(stalled_far._inbound) <= WINDOW  # bounded memory for the stalled one
        # Once its reader reads, the stalled stream goes on.
        total = 0
        while total < 10 * WINDOW:
            total += len(await stalled_far.read(WINDOW))
        await blocked


async def test_refusals_and_a_lost_channel() -> None:
    async def refuse(mux: Multiplexer, stream: EgressStream, _host: str, _port: int) -> None:
        mux.refuse(stream, Refusal.POLICY)

    async with pair(refuse) as joined:
        with pytest.raises(StreamRefused) as caught:
            await joined.host.open("10.0.0.1", 22)
        assert caught.value.reason == Refusal.POLICY
    async with pair() as joined:
        stream = await joined.host.open("example.com", 80)
        await joined.accepted.get()
        joined.member.close()
        joined.host.close()  # what the host does when the channel closes
        with pytest.raises(StreamReset):
            await stream.read(10)
        with pytest.raises(StreamReset):
            await stream.write(b"more")
        with pytest.raises(StreamRefused) as lost:
            await joined.host.open("example.com", 80)
        assert lost.value.reason is None


async def test_a_sender_past_its_credit_is_reset() -> None:
    async with pair() as joined:
        stream = await joined.host.open("example.com", 80)
        far, _, _ = await joined.accepted.get()

        joined.member.receive(encode(Kind.DATA, stream.id, b"x" * (WINDOW + 1)))
        assert far.reset  # more than its credit: the member's end resets the stream
        assert joined.member.open_streams == 0
        await eventually(lambda: stream.reset)  # and the host's end hears so


SPECIAL = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",  # noqa: S104 (an address to refuse, not one to bind)
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "64:ff9b::a00:1",
    "2002:a00:1::",
    "2001:db8::1",
]


@pytest.mark.parametrize("address", SPECIAL)
async def test_the_default_dialer_refuses_special_addresses_and_names_that_resolve_to_them(
    address: str,
) -> None:
    resolver = TableResolver({"inside.example": [address]})
    dialer = TargetDialer(PublicOnlyPolicy(), resolver)
    async with pair(dialer.dial) as joined:
        for target in (address, "inside.example"):
            with pytest.raises(StreamRefused) as caught:
                await joined.host.open(target, 80)
            assert caught.value.reason == Refusal.POLICY
    assert resolver.asked == ["inside.example"]


async def test_the_dialer_dials_the_pinned_address_an_allowed_endpoint_names() -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readexactly(5))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    allowed = PublicOnlyPolicy(
        allowed_endpoints=frozenset({(ipaddress.IPv4Address("127.0.0.1"), port)})
    )
    resolver = TableResolver({"fixture.example": ["127.0.0.1"]})
    dialer = TargetDialer(allowed, resolver)
    try:
        async with pair(dialer.dial) as joined:
            stream = await joined.host.open("fixture.example", port)
            await stream.write(b"hello")
            assert await stream.read(5) == b"hello"
            with pytest.raises(StreamRefused) as caught:
                await joined.host.open("127.0.0.1", port + 1 if port < 65535 else port - 1)
            assert caught.value.reason == Refusal.POLICY
            with pytest.raises(StreamRefused) as unresolved:
                await joined.host.open("nowhere.example", port)
            assert unresolved.value.reason == Refusal.UNRESOLVED
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await server.wait_closed()
