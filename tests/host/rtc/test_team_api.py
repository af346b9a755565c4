"""The team-api channel: every refusal is an answer with a code, and the channel stays open."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peer.connection import HostConnection, TeamApiCallError
from server.common.protocol.team_api import MAX_TEAM_API_MESSAGE
from server.common.roles import Role
from server.common.wire import WireModel
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import (
    HostRoute,
    HostRouteTable,
    PeerIdentity,
    TeamApiLimits,
    TeamApiSession,
)
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import ignore_max_message_size, peer_member, wait_linked
from tests.support.waiting import eventually

# The channel's refusals and framing, decided before any route reads the database.
pytestmark = pytest.mark.sqlite_only


def next_message(connection: HostConnection) -> asyncio.Future[dict[str, Any]]:
    """The next answer on the channel (requests sent with ``send_raw`` have no waiter)."""
    future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def on_message(raw: str | bytes) -> None:
        if not future.done():
            future.set_result(json.loads(raw))
        connection._channel.remove_listener("message", on_message)

    connection._channel.on("message", on_message)
    return future


@pytest.fixture
async def two_peers(
    server: RunningHub, tmp_path: Path
) -> AsyncIterator[tuple[HostConnection, HostConnection]]:
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    first = await member.connect(host_id)
    second = await member.connect(host_id)
    yield first, second
    await first.close()
    await second.close()
    await member.hub.close()


@pytest.mark.parametrize(
    ("raw", "code", "echoed_id"),
    [
        ("{not json", "invalidArgument", None),
        ("[1, 2]", "invalidArgument", None),
        ('{"id": 7}', "invalidArgument", 7),
        ('{"id": 8, "route": "nope/v9"}', "routeUnknown", 8),
        ('{"id": 9, "route": "capabilities", "args": {"x": 1}}', "invalidArgument", 9),
        ('{"id": 10, "route": "capabilities", "args": [], "extra": 1}', "invalidArgument", 10),
        ('{"id": "s", "route": "host-v1/whoami", "args": 5}', "invalidArgument", "s"),
    ],
)
async def test_bad_messages_get_coded_answers(
    two_peers: tuple[HostConnection, HostConnection], raw: str, code: str, echoed_id: Any
) -> None:
    first, _ = two_peers
    answer = next_message(first)
    first.send_raw(raw)
    reply = await asyncio.wait_for(answer, 10)
    assert reply["error"]["code"] == code
    assert reply["id"] == echoed_id
    assert (await first.call("capabilities"))["protocol"] == 1  # still open


async def test_an_id_that_is_not_unicode_text_is_refused_without_it(
    two_peers: tuple[HostConnection, HostConnection],
) -> None:
    # ASCII text whose id escapes a lone surrogate: a JSON string no answer can carry.
    first, _ = two_peers
    answer = next_message(first)
    first.send_raw('{"id": "\\ud800", "route": "capabilities", "bogus": 1}')
    reply = await asyncio.wait_for(answer, 10)
    assert (reply["id"], reply["error"]["code"]) == (None, "invalidArgument")
    assert (await first.call("capabilities"))["protocol"] == 1  # the same connection still works


async def test_binary_messages_are_refused(
    two_peers: tuple[HostConnection, HostConnection],
) -> None:
    first, _ = two_peers
    answer = next_message(first)
    first.send_raw(b'{"id": 1, "route": "capabilities"}')
    assert (await asyncio.wait_for(answer, 10))["error"]["code"] == "invalidArgument"


class RecordingChannel:
    readyState = "open"
    bufferedAmount = 0

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, data: str) -> None:
        self.sent.append(json.loads(data))


async def test_messages_over_256_kib_are_refused(server: RunningHub) -> None:
    # SCTP (aiortc's and browsers') already refuses to carry them; the host checks again.
    channel = RecordingChannel()
    peer = PeerIdentity("p" * 32, "a" * 32, "t" * 32, Role.MEMBER, "h" * 64)
    services = server.builtin.services
    session = TeamApiSession(
        services.team_api,
        peer,
        channel,
        services,
        TeamApiLimits(services.settings.rtc, services.clock),
        services.metrics,
    )
    session.on_message(
        '{"id": 1, "route": "capabilities", "pad": "' + "x" * MAX_TEAM_API_MESSAGE + '"}'
    )
    assert channel.sent == [
        {
            "id": None,
            "error": {"code": "messageTooLarge", "message": channel.sent[0]["error"]["message"]},
        }
    ]


class BrokenChannel(RecordingChannel):
    def send(self, data: str) -> None:
        raise RuntimeError("the channel broke")


async def test_a_refusal_that_cannot_be_sent_does_not_raise(
    server: RunningHub, caplog: pytest.LogCaptureFixture
) -> None:
    # A raise would end aiortc's receive loop, and every channel of the connection with it.
    services = server.builtin.services
    session = TeamApiSession(
        services.team_api,
        PeerIdentity("p" * 32, "a" * 32, "t" * 32, Role.MEMBER, "h" * 64),
        BrokenChannel(),
        services,
        TeamApiLimits(services.settings.rtc, services.clock),
        services.metrics,
    )
    session.on_message("{not json")
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "team-api refusal could not be answered"
    ]
    caplog.clear()


async def test_the_size_limit_counts_bytes_not_characters(
    two_peers: tuple[HostConnection, HostConnection],
) -> None:
    first, _ = two_peers
    ignore_max_message_size(first)
    pad = "\u20ac" * 200_000  # 200,000 characters, under the limit; 600,000 bytes, over it
    answer = next_message(first)
    first.send_raw(
        json.dumps({"id": 1, "route": "capabilities", "args": {"pad": pad}}, ensure_ascii=False)
    )
    reply = await asyncio.wait_for(answer, 10)
    assert reply == {"id": None, "error": reply["error"]}
    assert reply["error"]["code"] == "messageTooLarge"
    assert (await first.call("capabilities"))["protocol"] == 1  # still open


async def test_a_slow_handler_blocks_no_other_request(
    server: RunningHub, two_peers: tuple[HostConnection, HostConnection]
) -> None:
    release = asyncio.Event()

    async def slow(_call: HostCall, _args: NoArgs) -> Slow:
        await release.wait()
        return Slow(slow=True)

    api = server.builtin.services.team_api
    api.routes["test/slow"] = HostRoute("test/slow", NoArgs, Role.MEMBER, slow, "slow", Slow)
    first, second = two_peers
    pending = asyncio.ensure_future(first.call("test/slow"))
    # The same peer and another peer are both answered while the slow call waits.
    assert (await first.call("capabilities"))["protocol"] == 1
    assert (await second.call("capabilities"))["protocol"] == 1
    assert not pending.done()
    release.set()
    assert await pending == {"slow": True}


class Big(WireModel):
    text: str


def add_big_route(server: RunningHub, characters: int) -> None:
    """A route ``test/big`` whose answer carries ``characters`` of text."""

    async def big(_call: HostCall, _args: NoArgs) -> Big:
        return Big(text="x" * characters)

    api = server.builtin.services.team_api
    api.routes["test/big"] = HostRoute("test/big", NoArgs, Role.MEMBER, big, "big", Big)


async def test_an_answer_too_large_to_send_is_refused_with_a_code(
    server: RunningHub,
    two_peers: tuple[HostConnection, HostConnection],
    caplog: pytest.LogCaptureFixture,
) -> None:
    add_big_route(server, MAX_TEAM_API_MESSAGE)
    first, _ = two_peers
    with pytest.raises(TeamApiCallError) as caught:
        await first.call("test/big", wait_seconds=5)  # without an answer it would time out
    assert caught.value.code == "messageTooLarge"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warned if "test/big" in w and "too large" in w]) == 1
    assert (await first.call("capabilities"))["protocol"] == 1  # still open


class SmallChannel(RecordingChannel):
    """Refuses what aiortc refuses past a remote's smaller ``max-message-size``."""

    def send(self, data: str) -> None:
        if len(data) > 1000:
            raise ValueError(f"Cannot send message of {len(data)} bytes")
        super().send(data)


async def test_an_answer_the_channel_refuses_is_refused_with_a_code(server: RunningHub) -> None:
    add_big_route(server, 2000)
    channel = SmallChannel()
    services = server.builtin.services
    session = TeamApiSession(
        services.team_api,
        PeerIdentity("p" * 32, "a" * 32, "t" * 32, Role.MEMBER, "h" * 64),
        channel,
        services,
        TeamApiLimits(services.settings.rtc, services.clock),
        services.metrics,
    )
    session.on_message('{"id": 3, "route": "test/big"}')
    await eventually(lambda: bool(channel.sent))
    assert [(m["id"], m["error"]["code"]) for m in channel.sent] == [(3, "messageTooLarge")]


@pytest.fixture
async def strict_server(tmp_path: Path, database: ScratchDatabase) -> AsyncIterator[RunningHub]:
    settings = hub_settings(
        tmp_path, database, **{"rtc.team_api_burst": 3, "rtc.team_api_rate": 0.01}
    )
    async with running_hub(settings, database) as running:
        yield running


async def test_requests_above_the_rate_are_refused(
    strict_server: RunningHub, tmp_path: Path
) -> None:
    await strict_server.sign_up_owner()
    host_id = await wait_linked(strict_server)
    member = await peer_member(strict_server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)
    for _ in range(3):
        await connection.call("capabilities")
    with pytest.raises(TeamApiCallError) as caught:
        await connection.call("capabilities")
    assert caught.value.code == "rateLimited"
    await connection.close()
    await member.hub.close()


async def test_malformed_messages_spend_the_rate_as_requests_do(
    strict_server: RunningHub, tmp_path: Path
) -> None:
    await strict_server.sign_up_owner()
    host_id = await wait_linked(strict_server)
    member = await peer_member(strict_server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)
    for n in range(3):
        answer = next_message(connection)
        connection.send_raw(f'{{"id": {n}, "route": 5}}')
        assert (await asyncio.wait_for(answer, 10))["error"]["code"] == "invalidArgument"
    answer = next_message(connection)
    connection.send_raw('{"id": 9, "route": 5}')
    assert (await asyncio.wait_for(answer, 10))["error"]["code"] == "rateLimited"
    with pytest.raises(TeamApiCallError) as caught:
        await connection.call("capabilities")
    assert caught.value.code == "rateLimited"
    await connection.close()
    await member.hub.close()


async def test_the_rate_limit_is_shared_by_all_peers_of_a_member(
    strict_server: RunningHub, tmp_path: Path
) -> None:
    owner = await strict_server.sign_up_owner()
    team_id = await strict_server.first_team_id(owner)
    await strict_server.invite(owner, team_id, "member@example.com", "member")
    host_id = await wait_linked(strict_server)
    member = await peer_member(strict_server, "owner@example.com", tmp_path)
    other = await peer_member(strict_server, "member@example.com", tmp_path)
    first = await member.connect(host_id)
    for _ in range(3):
        await first.call("capabilities")
    # A second peer of the same member draws from the bucket the first one emptied.
    second = await member.connect(host_id)
    with pytest.raises(TeamApiCallError) as caught:
        await second.call("capabilities")
    assert caught.value.code == "rateLimited"
    # Another member of the team has a bucket of their own.
    theirs = await other.connect(host_id)
    for _ in range(3):
        await theirs.call("capabilities")
    for connection in (first, second, theirs):
        await connection.close()
    await member.hub.close()
    await other.hub.close()


async def test_the_in_flight_cap_is_shared_by_all_peers_of_a_member(server: RunningHub) -> None:
    release = asyncio.Event()

    async def slow(_call: HostCall, _args: NoArgs) -> Slow:
        await release.wait()
        return Slow(slow=True)

    services = server.builtin.services
    services.team_api.routes["test/slow"] = HostRoute(
        "test/slow", NoArgs, Role.MEMBER, slow, "slow", Slow
    )
    settings = services.settings.rtc.model_copy(update={"team_api_in_flight": 1})
    limits = TeamApiLimits(settings, services.clock)

    def session(peer_id: str, account_id: str) -> RecordingChannel:
        channel = RecordingChannel()
        peer = PeerIdentity(peer_id, account_id, "t" * 32, Role.MEMBER, "h" * 64)
        made = TeamApiSession(services.team_api, peer, channel, services, limits, services.metrics)
        made.on_message('{"id": 1, "route": "test/slow"}')
        return channel

    first = session("p" * 32, "a" * 32)
    second = session("q" * 32, "a" * 32)  # another peer of the same member: refused
    other = session("r" * 32, "b" * 32)  # another member: runs
    assert [m["error"]["code"] for m in second.sent] == ["rateLimited"]
    assert (first.sent, other.sent, len(limits)) == ([], [], 2)
    release.set()
    # Nothing is left of a member whose calls have all ended.
    await eventually(lambda: len(limits) == 0)
    assert first.sent == other.sent == [{"id": 1, "result": {"slow": True}}]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
requests = st.fixed_dictionaries(
    {},
    optional={
        "id": st.integers(-5, 2**60) | st.text(max_size=70) | st.none(),
        "route": st.sampled_from(["capabilities", "host-v1/whoami", "host-v1/peers/list", "x"])
        | st.text(max_size=20),
        "args": json_values,
    },
)
garbage = st.text(max_size=200) | requests.map(json.dumps) | json_values.map(json.dumps)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages=st.lists(garbage, min_size=1, max_size=5))
async def test_garbage_never_breaks_the_host(
    two_peers: tuple[HostConnection, HostConnection],
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    messages: list[str],
) -> None:
    caplog.set_level(logging.ERROR)
    clock.advance(10)  # each example's messages spend the member's rate anew
    first, second = two_peers
    for message in messages:
        if message:
            first.send_raw(message)
    assert (await second.call("capabilities"))["protocol"] == 1
    assert (await first.call("host-v1/whoami"))["role"] == "owner"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class Slow(WireModel):
    slow: bool


def test_a_route_must_declare_its_result_model() -> None:
    table = HostRouteTable("test-v1")

    async def untyped(_call: HostCall, _args: NoArgs) -> dict[str, bool]:
        return {}

    with pytest.raises(TypeError, match="WireModel"):
        table.route("test-v1/untyped", args=NoArgs, least_role=Role.MEMBER)(untyped)
