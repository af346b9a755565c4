"""The team-api channel under a misbehaving peer, over real aiortc on loopback.

An owner's and a member's peers send arbitrary JSON and bytes, and requests to every
route of the host protocol document with the arguments schemathesis makes of its
schemas (fitting and not), with extreme values mixed in. Every request is answered
exactly once, every refusal has a declared code and none is ``internal``, nothing is
logged as an error, both channels stay open, and a third peer is answered throughout.
One host and its peers serve the whole module.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
import schemathesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis import APIOperation
from schemathesis.core.errors import InvalidSchema
from schemathesis.core.result import Err, Ok
from schemathesis.generation.modes import GenerationMode

from peer.connection import HostConnection
from server.common.error_codes import HOST_ANSWERS
from server.common.protocol.team_api import MAX_TEAM_API_MESSAGE
from server.host.protocol_document import host_protocol_document
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.fuzzing import examples
from tests.support.hostile import encode_hostile, unreadable, with_extremes
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.loop_watch import module_loop_watch  # noqa: F401 - a fixture
from tests.support.peers import peer_member, wait_linked

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(600),
]

DECLARED = {entry.code for entry in HOST_ANSWERS} - {"internal"}
ANSWER_SECONDS = 30.0
PROTOCOL = schemathesis.openapi.from_dict(host_protocol_document())


def _operation(
    result: Ok[APIOperation[Any, Any, Any, Any]] | Err[InvalidSchema],
) -> APIOperation[Any, Any, Any, Any]:
    """A route of the protocol document; a route the document describes wrongly fails here."""
    if isinstance(result, Err):
        raise result.err()
    return result.ok()


OPERATIONS = sorted(
    (_operation(result) for result in PROTOCOL.get_all_operations()), key=lambda op: op.path
)


@dataclass
class Listener:
    """Every message one connection received, by request id."""

    connection: HostConnection
    answers: Counter[Any] = field(default_factory=Counter)
    last: dict[Any, dict[str, Any]] = field(default_factory=dict)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.connection._channel.on("message", self._on_message)

    def _on_message(self, raw: str | bytes) -> None:
        message = json.loads(raw)
        if "event" in message:
            return
        self.answers[message.get("id")] += 1
        self.last[message.get("id")] = message
        self.arrived.set()

    async def answer(self, request_id: Any, sent: str = "") -> dict[str, Any]:
        try:
            async with asyncio.timeout(ANSWER_SECONDS):
                while request_id not in self.last:
                    self.arrived.clear()
                    await self.arrived.wait()
        except TimeoutError:
            raise AssertionError(f"no answer to {sent[:300]!r}") from None
        return self.last[request_id]


@dataclass
class Peers:
    server: RunningHub
    owner: Listener
    member: Listener
    bystander: HostConnection
    serial: itertools.count[int] = field(default_factory=itertools.count)
    sent: list[tuple[Listener, str]] = field(default_factory=list)

    def next_id(self) -> str:
        """Ids of a kind the peer library's own calls never use."""
        return f"fuzz-{next(self.serial)}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def peers(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Peers]:
    folder = tmp_path_factory.mktemp("team-api-fuzz")
    # The rate limit is tested on its own; here it would answer most requests rateLimited.
    limits = {"rtc.team_api_burst": 100_000, "rtc.team_api_rate": 100_000.0}
    async with (
        scratch_database("sqlite", folder) as database,
        running_hub(
            hub_settings(folder, database, **limits), database, clock=FakeClock()
        ) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        await server.invite(owner, team_id, "member@example.com", "member")
        host_id = await wait_linked(server)
        members = [
            await peer_member(server, email, folder)
            for email in ("owner@example.com", "member@example.com")
        ]
        connections = [await m.connect(host_id) for m in members]
        bystander = await members[1].connect(host_id)
        running = Peers(server, Listener(connections[0]), Listener(connections[1]), bystander)
        yield running
        # Every request of the whole module was answered exactly once.
        for listener, request_id in running.sent:
            assert listener.answers[request_id] == 1, (request_id, listener.last.get(request_id))
        for connection in (*connections, bystander):
            await connection.close()
        for member in members:
            await member.hub.close()


def request_strategy() -> st.SearchStrategy[tuple[str, Any]]:
    """A route of the protocol document and arguments made from its schema."""

    @st.composite
    def made(draw: st.DrawFn) -> tuple[str, Any]:
        operation = draw(st.sampled_from(OPERATIONS))
        mode = draw(st.sampled_from([GenerationMode.POSITIVE, GenerationMode.NEGATIVE]))
        case = draw(operation.as_strategy(generation_mode=mode))
        # A route without arguments has no body (schemathesis's NOT_SET): send none.
        body = case.body if isinstance(case.body, dict | list | str | int | float) else {}
        return operation.path.lstrip("/"), with_extremes(draw, body)

    return made()


def assert_well_answered(answer: dict[str, Any]) -> None:
    if "error" in answer:
        assert answer["error"]["code"] in DECLARED, answer
        assert isinstance(answer["error"]["message"], str)
    else:
        assert "result" in answer, answer


async def still_serving(peers: Peers) -> None:
    assert (await peers.bystander.call("capabilities"))["protocol"] == 1
    assert (await peers.owner.connection.call("host-v1/whoami"))["role"] == "owner"
    assert (await peers.member.connection.call("host-v1/whoami"))["role"] == "member"


FUZZ = settings(
    max_examples=examples(30, 1000),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


@FUZZ
@given(
    requests=st.lists(
        st.tuples(st.sampled_from(["owner", "member"]), request_strategy()), min_size=1, max_size=4
    )
)
async def test_every_request_is_answered_once_with_a_declared_code(
    peers: Peers, caplog: pytest.LogCaptureFixture, requests: list[tuple[str, tuple[str, Any]]]
) -> None:
    caplog.set_level(logging.ERROR)
    waiting = []
    for who, (route, args) in requests:
        listener = peers.owner if who == "owner" else peers.member
        request_id = peers.next_id()
        raw = encode_hostile({"id": request_id, "route": route, "args": args})
        # An oversize message is refused unread, without its id (tested on its own).
        assume(len(raw.encode()) <= MAX_TEAM_API_MESSAGE)
        listener.connection.send_raw(raw)
        peers.sent.append((listener, request_id))
        waiting.append(listener.answer(request_id, raw))
    for answer in await asyncio.gather(*waiting):
        assert_well_answered(answer)
    await still_serving(peers)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@FUZZ
@given(messages=st.lists(unreadable, min_size=1, max_size=5))
async def test_unreadable_messages_are_each_refused_once(
    peers: Peers, caplog: pytest.LogCaptureFixture, messages: list[str | bytes]
) -> None:
    caplog.set_level(logging.ERROR)
    listener = peers.member
    before = listener.answers[None]
    for message in messages:
        listener.connection.send_raw(message)
    # Refusals of what cannot be read leave at once, in order, before this answer.
    sentinel = peers.next_id()
    listener.connection.send_raw(json.dumps({"id": sentinel, "route": "capabilities"}))
    peers.sent.append((listener, sentinel))
    assert "result" in await listener.answer(sentinel)
    assert listener.answers[None] - before == len(messages)
    assert listener.last[None]["error"]["code"] in DECLARED
    await still_serving(peers)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
