"""SCTP bundling: fewer datagrams for the same messages, SACKs delayed as RFC 4960 allows,
between two real aiortc peers on loopback, either or both of them bundling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest
from aiortc import RTCDataChannel, RTCPeerConnection
from aiortc.rtcsctptransport import (
    SCTP_MAX_PACKET_LENGTH,
    USERDATA_MAX_LENGTH,
    DataChunk,
    RTCSctpTransport,
    parse_packet,
)

from server.common import sctp_bundling
from server.common.sctp_bundling import BundlingSctpTransport, aiortc_mismatch, bundle_sctp
from tests.support.rtc_pairs import channel_pair
from tests.support.waiting import eventually

# Long enough that it never fires within a test that counts SACKs sent at once.
NEVER_SECONDS = 60.0


@dataclass
class Wire:
    """What one side's SCTP transport sent: the chunk types of each datagram, in order."""

    datagrams: list[list[str]] = field(default_factory=list)

    def sacks(self) -> int:
        return sum(types.count("SackChunk") for types in self.datagrams)


@dataclass
class Side:
    connection: RTCPeerConnection
    channel: RTCDataChannel
    wire: Wire
    received: list[str]
    handled: asyncio.Queue[None]

    @property
    def sctp(self) -> RTCSctpTransport:
        transport = self.connection.sctp
        assert transport is not None
        return transport


def record(side_connection: RTCPeerConnection, wire: Wire, handled: asyncio.Queue[None]) -> None:
    """Record each datagram the SCTP transport sends and each inbound packet it handles."""
    transport = side_connection.sctp
    assert transport is not None
    dtls = transport.transport
    send_data = dtls._send_data
    handle_data = transport._handle_data

    async def recorded_send(data: bytes) -> None:
        assert len(data) <= SCTP_MAX_PACKET_LENGTH
        wire.datagrams.append([type(chunk).__name__ for chunk in parse_packet(data)[3]])
        await send_data(data)

    async def recorded_handle(data: bytes) -> None:
        await handle_data(data)
        handled.put_nowait(None)

    dtls._send_data = recorded_send  # type: ignore[method-assign]
    transport._handle_data = recorded_handle  # type: ignore[method-assign]


@asynccontextmanager
async def pair(
    *, offerer_bundles: bool, answerer_bundles: bool
) -> AsyncIterator[tuple[Side, Side]]:
    """Two peers on loopback with an open ``test`` channel, each bundling or plain aiortc."""

    def prepare(offerer: RTCPeerConnection, answerer: RTCPeerConnection) -> None:
        if offerer_bundles:
            assert bundle_sctp(offerer)
        if answerer_bundles:
            assert bundle_sctp(answerer)

    async with channel_pair("test", prepare) as joined:
        sides = []
        for connection, side_channel in (
            (joined.offerer, joined.near),
            (joined.answerer, joined.far),
        ):
            received: list[str] = []
            side_channel.on("message", received.append)
            side = Side(connection, side_channel, Wire(), received, asyncio.Queue())
            record(connection, side.wire, side.handled)
            sides.append(side)
        await quiet(*sides)
        yield sides[0], sides[1]


async def quiet(*sides: Side) -> None:
    """Wait until nothing is left unacknowledged either way, then forget what was sent."""
    await eventually(lambda: all(not side.sctp._sent_queue for side in sides))
    for side in sides:
        side.wire.datagrams.clear()
        while not side.handled.empty():
            side.handled.get_nowait()


def test_the_override_applies_to_the_installed_aiortc() -> None:
    # A new aiortc fails here: read its SCTP transport again before updating the digests.
    assert aiortc_mismatch() is None


async def test_an_aiortc_whose_internals_differ_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = dict(sctp_bundling.AIORTC_SOURCE_SHA256)
    expected["RTCSctpTransport._transmit"] = "0" * 16
    monkeypatch.setattr(sctp_bundling, "AIORTC_SOURCE_SHA256", expected)
    sctp_bundling.aiortc_mismatch.cache_clear()
    connection = RTCPeerConnection()
    try:
        connection.createDataChannel("test")
        assert not bundle_sctp(connection)
        assert type(connection.sctp) is RTCSctpTransport
    finally:
        sctp_bundling.aiortc_mismatch.cache_clear()
        await connection.close()


@pytest.mark.parametrize("answerer_bundles", [True, False], ids=["both", "one"])
async def test_messages_sent_in_one_tick_share_datagrams(answerer_bundles: bool) -> None:
    async with pair(offerer_bundles=True, answerer_bundles=answerer_bundles) as (near, far):
        messages = [f"message {n}" for n in range(20)]
        for message in messages:
            near.channel.send(message)
        await eventually(lambda: len(far.received) == len(messages))
        assert far.received == messages
        data_datagrams = [types for types in near.wire.datagrams if "DataChunk" in types]
        # Twenty small messages fit a few packets (aiortc alone sends one each).
        assert sum(types.count("DataChunk") for types in data_datagrams) == len(messages)
        assert len(data_datagrams) < len(messages) // 4


async def test_without_bundling_each_message_is_a_datagram() -> None:
    # The comparison the test above rests on: plain aiortc, the same twenty messages.
    async with pair(offerer_bundles=False, answerer_bundles=False) as (near, far):
        for n in range(20):
            near.channel.send(f"message {n}")
        await eventually(lambda: len(far.received) == 20)
        assert len([types for types in near.wire.datagrams if "DataChunk" in types]) == 20


async def test_a_message_larger_than_a_packet_is_split_and_reassembled() -> None:
    async with pair(offerer_bundles=True, answerer_bundles=False) as (near, far):
        big = "x" * (3 * USERDATA_MAX_LENGTH + 10)
        near.channel.send("small")
        near.channel.send(big)
        near.channel.send("after")
        await eventually(lambda: len(far.received) == 3)
        assert far.received == ["small", big, "after"]


async def round_trips(near: Side, far: Side, count: int) -> None:
    """``count`` requests from ``near``, each answered by ``far`` before the next."""
    far.channel.on("message", lambda message: far.channel.send(f"re: {message}"))
    for n in range(count):
        await send_and_wait(near, near, f"request {n}")
    assert near.received == [f"re: request {n}" for n in range(count)]


async def test_a_request_and_its_response_are_two_datagrams_when_both_bundle() -> None:
    async with pair(offerer_bundles=True, answerer_bundles=True) as (near, far):
        near.sctp.sack_delay = far.sctp.sack_delay = NEVER_SECONDS  # type: ignore[attr-defined]
        await round_trips(near, far, 10)
        # Each response carries the SACK of its request, each request that of the last
        # response; the last response's SACK is still owed.
        assert len(near.wire.datagrams) == 10
        assert len(far.wire.datagrams) == 10
        assert all(types == ["SackChunk", "DataChunk"] for types in far.wire.datagrams)
        assert all(types == ["SackChunk", "DataChunk"] for types in near.wire.datagrams[1:])


async def test_round_trips_with_plain_aiortc_are_four_datagrams() -> None:
    async with pair(offerer_bundles=False, answerer_bundles=False) as (near, far):
        await round_trips(near, far, 10)
        await eventually(lambda: far.wire.sacks() == 10 and near.wire.sacks() == 10)
        assert len(near.wire.datagrams) + len(far.wire.datagrams) == 40


async def send_and_wait(sender: Side, receiver: Side, message: str) -> None:
    """Send ``message`` in a packet of its own and wait until the receiver handled it."""
    before = len(receiver.received)
    sender.channel.send(message)
    while len(receiver.received) == before:
        await receiver.handled.get()


async def test_a_sack_goes_after_every_second_packet_with_data() -> None:
    async with pair(offerer_bundles=False, answerer_bundles=True) as (near, far):
        far.sctp.sack_delay = NEVER_SECONDS  # type: ignore[attr-defined]
        await send_and_wait(near, far, "one")
        assert far.wire.sacks() == 0
        await send_and_wait(near, far, "two")
        assert far.wire.datagrams == [["SackChunk"]]
        await send_and_wait(near, far, "three")
        assert far.wire.sacks() == 1
        await send_and_wait(near, far, "four")
        assert far.wire.sacks() == 2
        await eventually(lambda: not near.sctp._sent_queue)  # all of it acknowledged


async def test_a_lone_packet_is_acknowledged_when_the_delay_ends() -> None:
    async with pair(offerer_bundles=False, answerer_bundles=True) as (near, far):
        far.sctp.sack_delay = 0.05  # type: ignore[attr-defined]
        await send_and_wait(near, far, "one")
        await eventually(lambda: not near.sctp._sent_queue)
        assert far.wire.datagrams == [["SackChunk"]]


async def test_a_gap_is_reported_at_once() -> None:
    async with pair(offerer_bundles=False, answerer_bundles=True) as (near, far):
        far.sctp.sack_delay = NEVER_SECONDS  # type: ignore[attr-defined]
        lost = drop_next_data(near)
        near.channel.send("lost on the way")
        await lost
        await send_and_wait_for_packet(near, far, "after the gap")
        # The SACK reporting the gap went at once, not after the delay.
        assert far.wire.sacks() == 1
        # aiortc retransmits what is outstanding, and that is acknowledged at once too
        # (the delay would not end within the test).
        await eventually(lambda: not near.sctp._sent_queue, seconds=30)
        assert far.received == ["lost on the way", "after the gap"]


def drop_next_data(side: Side) -> Awaitable[None]:
    """Drop the next datagram ``side`` sends that carries DATA; done once dropped."""
    dtls = side.sctp.transport
    send_data = dtls._send_data
    dropped: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def dropping(data: bytes) -> None:
        if not dropped.done() and any(isinstance(c, DataChunk) for c in parse_packet(data)[3]):
            dropped.set_result(None)
            return
        await send_data(data)

    dtls._send_data = dropping  # type: ignore[method-assign]
    return dropped


async def send_and_wait_for_packet(sender: Side, receiver: Side, message: str) -> None:
    """Send ``message`` and wait until the receiver handled one packet."""
    sender.channel.send(message)
    await receiver.handled.get()


async def test_adopting_a_transport_keeps_its_aiortc_type() -> None:
    connection = RTCPeerConnection()
    try:
        connection.createDataChannel("test")
        assert bundle_sctp(connection)
        assert isinstance(connection.sctp, BundlingSctpTransport)
        assert isinstance(connection.sctp, RTCSctpTransport)
    finally:
        await connection.close()
