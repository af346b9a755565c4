"""The egress multiplexer between two ends joined back to back (the channel's ordered
delivery is all it relies on): streams carry bytes both ways, a stalled stream never
stalls another and buffers at most one window, refusals and a lost channel end cleanly,
a small stream's frames go ahead of a bulk stream's queue, a sender keeps at most the
link window unreported, over a real aiortc channel too, and the member's dialer refuses
every non-public address by default, and its own network as it is now."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

from peer.egress import TABLE_REREAD_SECONDS, TargetDialer, member_policy
from peer.own_network import InterfaceTable
from server.common.egress import (
    CHANNEL_HIGH_WATER,
    CHUNK,
    LINK_WINDOW,
    SMALL_ALLOWANCE,
    SMALL_STREAM_BYTES,
    EgressStream,
    Kind,
    Multiplexer,
    Refusal,
    StreamRefused,
    StreamReset,
    channel_multiplexer,
    encode,
)
from server.common.public_addresses import NonPublicAddress, PublicOnlyPolicy
from tests.support.resolvers import TableResolver
from tests.support.rtc_pairs import channel_pair
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
    *,
    window: int = WINDOW,
    room: Callable[[], bool] | None = None,
    to_member: Callable[[bytes], bool] | None = None,
    to_host: Callable[[bytes], bool] | None = None,
    reporting: bool = True,
) -> AsyncIterator[Pair]:
    """Two multiplexers whose frames reach each other in order, one loop turn later.
    ``room`` is the host's channel room; ``to_member`` and ``to_host`` see each frame
    first and hold it back by answering False; ``reporting`` False: ends of an older
    kind, which never report what they receive."""
    loop = asyncio.get_running_loop()
    accepted: asyncio.Queue[tuple[EgressStream, str, int]] = asyncio.Queue()
    member: Multiplexer

    async def take(stream: EgressStream, host: str, port: int) -> None:
        if accept is not None:
            await accept(member, stream, host, port)  # type: ignore[misc]
            return
        member.accepted(stream)
        await accepted.put((stream, host, port))

    def down(frame: bytes) -> None:
        if to_member is None or to_member(frame):
            loop.call_soon(member.receive, frame)

    def up(frame: bytes) -> None:
        if to_host is None or to_host(frame):
            loop.call_soon(host.receive, frame)

    host = Multiplexer(down, room=room, window=window)
    member = Multiplexer(up, accept=take, window=window)
    if reporting:
        host.start()
        member.start()
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


def kinds_and_ids(frames: list[bytes]) -> list[tuple[Kind, int]]:
    return [(Kind(frame[0]), int.from_bytes(frame[1:5], "big")) for frame in frames]


async def test_a_small_streams_frame_goes_before_the_rest_of_a_bulk_streams_queue() -> None:
    sent: list[bytes] = []
    gate = {"open": True}

    def record(frame: bytes) -> bool:
        sent.append(frame)
        return True

    async with pair(window=256 * 1024, room=lambda: gate["open"], to_member=record) as joined:
        bulk = await joined.host.open("bulk.example", 80)
        await joined.accepted.get()
        small = await joined.host.open("small.example", 80)
        await joined.accepted.get()
        await bulk.write(b"b" * SMALL_STREAM_BYTES)  # now a bulk stream
        await eventually(lambda: joined.host.in_flight == 0)  # all of it reported
        gate["open"] = False  # the channel's buffer is full
        await bulk.write(b"b" * (2 * CHUNK))  # two frames wait in the multiplexer
        await small.write(b"ping")
        joined.host.send(Kind.CREDIT, small.id, (1).to_bytes(4, "big"))
        mark = len(sent)
        gate["open"] = True
        joined.host.pump()
        assert kinds_and_ids(sent[mark:]) == [
            (Kind.CREDIT, small.id),  # control frames first
            (Kind.DATA, small.id),  # then the small stream, ahead of the bulk queue
            (Kind.DATA, bulk.id),  # the bulk stream's second frame waits for the link window
        ]


async def test_a_sender_keeps_at_most_the_link_window_unreported() -> None:
    """A bulk stream stops at the link window; a small one (a stream's first
    ``SMALL_STREAM_BYTES``) at the window and the small allowance past it."""
    held: list[bytes] = []
    hold = {"reports": True}

    def to_host(frame: bytes) -> bool:
        if hold["reports"] and frame[0] == Kind.RECEIVED and frame[5:] != bytes(4):
            held.append(frame)  # the member's reports, but not its first "I report"
            return False
        return True

    async def sent_while_unreported(size: int) -> int:
        """Writes ``size`` bytes with the reports held: what arrived before the sender
        stopped. Then lets the reports through and reads the rest."""
        hold["reports"] = True
        before = len(far._inbound)
        writing = asyncio.ensure_future(stream.write(b"x" * size))
        await eventually(lambda: len(far._inbound) - before >= LINK_WINDOW)
        for _ in range(5):
            await asyncio.sleep(0)  # turns of the loop in which nothing more may arrive
        arrived = len(far._inbound) - before
        hold["reports"] = False
        for frame in held:
            joined.host.receive(frame)
        held.clear()
        received = 0
        while received < size:
            received += len(await far.read(LINK_WINDOW))
        await writing
        assert joined.host.in_flight <= LINK_WINDOW
        return arrived

    async with pair(window=256 * 1024, to_host=to_host) as joined:
        stream = await joined.host.open("example.com", 80)
        far, _, _ = await joined.accepted.get()
        assert await sent_while_unreported(SMALL_STREAM_BYTES) == LINK_WINDOW + SMALL_ALLOWANCE
        assert stream.sent_bytes == SMALL_STREAM_BYTES  # a bulk stream from now on
        assert await sent_while_unreported(4 * LINK_WINDOW) == LINK_WINDOW


async def test_an_end_that_does_not_report_is_sent_to_without_the_link_window() -> None:
    async with pair(reporting=False) as joined:
        stream = await joined.host.open("example.com", 80)
        far, _, _ = await joined.accepted.get()
        writing = asyncio.ensure_future(stream.write(b"x" * WINDOW))
        await eventually(lambda: len(far._inbound) == WINDOW)
        await writing
        assert joined.host.in_flight == 0


async def test_over_a_real_channel_queued_bytes_stay_bounded_during_a_bulk_transfer() -> None:
    peaks = {"in_flight": 0, "buffered": 0}
    async with channel_pair("egress") as joined:
        near_channel, far_channel = joined.near, joined.far
        accepted: asyncio.Queue[EgressStream] = asyncio.Queue()

        async def take(stream: EgressStream, _host: str, _port: int) -> None:
            far.accepted(stream)
            await accepted.put(stream)

        send = near_channel.send
        muxes: list[Multiplexer] = []

        def measured(frame: bytes | str) -> None:
            send(frame)
            in_flight = muxes[0].in_flight if muxes else 0
            peaks["in_flight"] = max(peaks["in_flight"], in_flight)
            peaks["buffered"] = max(peaks["buffered"], near_channel.bufferedAmount)

        # Every frame the multiplexer sends goes through the measurement first.
        setattr(near_channel, "send", measured)  # noqa: B010
        near = channel_multiplexer(near_channel)
        muxes.append(near)
        far = channel_multiplexer(far_channel, accept=take)
        bulk = await near.open("bulk.example", 80)
        bulk_far = await accepted.get()
        small = await near.open("small.example", 80)
        small_far = await accepted.get()
        payload = bytes(range(256)) * (4 * 1024)  # 1 MiB: sixteen link windows
        writing = asyncio.ensure_future(bulk.write(payload))
        received = bytearray()

        async def read_bulk() -> None:
            while len(received) < len(payload):
                received.extend(await bulk_far.read(CHUNK))

        reading = asyncio.ensure_future(read_bulk())
        for n in range(20):  # small exchanges while the bulk transfer runs
            await small.write(f"ping {n}".encode())
            assert await small_far.read(100) == f"ping {n}".encode()
        await asyncio.gather(writing, reading)
        assert bytes(received) == payload
        far.close()
        near.close()
    # At most the link window and the small streams' allowance (and the one frame that
    # crossed it) was sent and unreported, whether it waited in the channel's buffer, in
    # SCTP's queue or in flight.
    assert LINK_WINDOW <= peaks["in_flight"] < LINK_WINDOW + SMALL_ALLOWANCE + CHUNK + 5
    assert peaks["buffered"] < CHANNEL_HIGH_WATER + CHUNK + 5


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


async def test_a_shared_computer_dials_none_of_its_own_public_addresses() -> None:
    """A service listening on every interface of the member's computer answers on its
    public address too (a global IPv6 one, often): the host may not reach it that way."""
    own = ipaddress.ip_address("44.0.0.1")
    table = InterfaceTable((ipaddress.ip_interface(own),))
    resolver = TableResolver({"laptop.example": [str(own)]})
    dialer = TargetDialer(member_policy(table), resolver)
    async with pair(dialer.dial) as joined:
        for target in (str(own), "laptop.example"):
            with pytest.raises(StreamRefused) as caught:
                await joined.host.open(target, 22)
            assert caught.value.reason == Refusal.POLICY
    assert member_policy(table).permits(ipaddress.ip_address("44.0.0.2"), 443)


# The member's computer: a global IPv6 address in its link's /64, a public IPv4 subnet,
# and an on-link route its router advertised for another prefix of the same site.
MEMBER_LINKS = InterfaceTable(
    addresses=(
        ipaddress.ip_interface("2a0e:4f00:1:2::5/64"),
        ipaddress.ip_interface("44.0.7.10/28"),
        ipaddress.ip_interface("192.168.1.20/24"),
    ),
    on_link_routes=(ipaddress.ip_network("2a0e:4f00:1:9::/64"),),
)
NEIGHBOURS = ["2a0e:4f00:1:2::1", "2a0e:4f00:1:2:aaaa::77", "44.0.7.1", "2a0e:4f00:1:9::3"]


@pytest.mark.parametrize("neighbour", NEIGHBOURS)
async def test_a_shared_computer_dials_no_other_device_on_its_links(neighbour: str) -> None:
    """A printer or NAS beside the member's computer has a public address too (a global
    IPv6 one in the link's /64): it is refused like the computer's own, by address and by
    a name that resolves to it."""
    resolver = TableResolver({"nas.example": [neighbour]})
    dialer = TargetDialer(member_policy(MEMBER_LINKS), resolver)
    async with pair(dialer.dial) as joined:
        for target in (neighbour, "nas.example"):
            with pytest.raises(StreamRefused) as caught:
                await joined.host.open(target, 443)
            assert caught.value.reason == Refusal.POLICY


def test_the_links_refuse_only_their_own_prefixes() -> None:
    policy = member_policy(MEMBER_LINKS)
    for outside in ("2a0e:4f00:1:3::1", "2a0e:4f00:2::1", "44.0.7.16", "1.1.1.1"):
        assert policy.permits(ipaddress.ip_address(outside), 443), outside
    assert not policy.permits(ipaddress.ip_address("192.168.1.7"), 443)
    # A private subnet is refused already, and keeps its own name.
    with pytest.raises(NonPublicAddress) as caught:
        policy.vet("printer", ipaddress.ip_address("192.168.1.7"), 631)
    assert caught.value.block == "a private network"


async def test_a_global_ipv6_address_listed_alone_still_refuses_its_neighbours() -> None:
    """DHCPv6 gives the member's computer a /128 and no on-link route: the printer beside
    it is in the same /64 all the same."""
    table = InterfaceTable((ipaddress.ip_interface("2a0e:4f00:1:2::5/128"),))
    dialer = TargetDialer(member_policy(table), TableResolver({}))
    async with pair(dialer.dial) as joined:
        with pytest.raises(StreamRefused) as caught:
            await joined.host.open("2a0e:4f00:1:2::1", 631)
        assert caught.value.reason == Refusal.POLICY
    assert member_policy(table).permits(ipaddress.ip_address("2a0e:4f00:1:3::1"), 443)


class ChangingTable:
    """The member's interface table as the next read finds it; counts the reads."""

    def __init__(self, table: InterfaceTable) -> None:
        self.table = table
        self.reads = 0

    def __call__(self) -> InterfaceTable:
        self.reads += 1
        return self.table


class Clock:
    """A monotonic clock that moves only when a test moves it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_link_that_comes_up_while_sharing_is_refused_once_the_table_is_reread() -> None:
    """Sharing lasts until Ctrl+C: the laptop joins another Wi-Fi (a new address of its
    own, a new link with a NAS on it). Within ``TABLE_REREAD_SECONDS`` both are refused."""
    home = InterfaceTable((ipaddress.ip_interface("2a0e:4f00:1:2::5/64"),))
    cafe = InterfaceTable(
        (
            ipaddress.ip_interface("2a0e:4f00:8:1::5/64"),
            ipaddress.ip_interface("44.0.9.10/28"),
        )
    )
    tables, clock = ChangingTable(home), Clock()
    resolver = TableResolver({"nas.example": ["2a0e:4f00:8:1::77"]})
    dialer = TargetDialer(resolver=resolver, read_table=tables, clock=clock)
    arrived = ("2a0e:4f00:8:1::77", "2a0e:4f00:8:1::5", "44.0.9.10", "44.0.9.1")
    tables.table = cafe
    clock.now += TABLE_REREAD_SECONDS - 0.5
    assert all(dialer.policy().permits(ipaddress.ip_address(a), 443) for a in arrived)
    assert tables.reads == 1

    clock.now += 0.5
    async with pair(dialer.dial) as joined:
        for target in (*arrived, "nas.example"):
            with pytest.raises(StreamRefused) as caught:
                await joined.host.open(target, 443)
            assert caught.value.reason == Refusal.POLICY, target
    assert tables.reads == 2


def test_the_member_policy_is_rebuilt_only_when_the_table_changed() -> None:
    tables, clock = ChangingTable(MEMBER_LINKS), Clock()
    dialer = TargetDialer(read_table=tables, clock=clock)
    first = dialer.policy()
    # An equal table, read anew: the policy built from it stays.
    tables.table = InterfaceTable(MEMBER_LINKS.addresses, MEMBER_LINKS.on_link_routes)
    clock.now += TABLE_REREAD_SECONDS
    assert dialer.policy() is first
    assert tables.reads == 2
    tables.table = InterfaceTable(MEMBER_LINKS.addresses[:1])
    clock.now += TABLE_REREAD_SECONDS
    assert dialer.policy() is not first
    assert dialer.policy().permits(ipaddress.ip_address("44.0.7.1"), 443)
    assert tables.reads == 3


def test_a_table_that_cannot_be_read_again_leaves_the_links_as_last_read() -> None:
    tables, clock = ChangingTable(MEMBER_LINKS), Clock()
    dialer = TargetDialer(read_table=tables, clock=clock)
    first = dialer.policy()

    def unreadable() -> InterfaceTable:
        raise AssertionError("an adapter with no netmask")

    dialer._read_table = unreadable
    clock.now += TABLE_REREAD_SECONDS
    assert dialer.policy() is first
    assert dialer.policy() is first  # and it is not read again before its time


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
