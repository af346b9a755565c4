"""A ``view:<tabId>`` channel under a misbehaving viewer, over real aiortc and real Chromium.

The viewer sends arbitrary JSON and bytes, and view messages of every type with extreme
values mixed in (taking control, so input reaches the page). Nothing is logged as an
error, every refusal has a declared code, every unreadable message is refused exactly
once, the view's messages are still handled in order afterwards (a ``release`` is
answered), the channel stays open and the team-api channel beside it still answers.
One host, tab, peer and view serve the whole module.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from peer.connection import HostConnection
from peer.live_view import LiveView, open_view
from server.common.error_codes import HOST_ANSWERS
from server.common.protocol.view import MAX_TYPED_TEXT
from server.host.browser.partitions import Partition
from tests.host.live.conftest import PAGES
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.fuzzing import examples
from tests.support.hostile import encode_hostile, unreadable, with_extremes
from tests.support.hub_server import hub_settings, running_hub
from tests.support.loop_watch import module_loop_watch  # noqa: F401 - a fixture
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import pages_app, serving

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]

DECLARED = {entry.code for entry in HOST_ANSWERS} - {"internal"}
ANSWER_SECONDS = 30.0


@dataclass
class Viewing:
    connection: HostConnection
    view: LiveView


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def viewing(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Viewing]:
    folder = tmp_path_factory.mktemp("view-fuzz")
    pages = {path: f"<!doctype html>{body}" for path, body in PAGES.items()}
    async with (
        scratch_database("sqlite", folder) as database,
        serving(pages_app(pages)) as site,
        running_hub(hub_settings(folder, database), database, clock=FakeClock()) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        host_id = await wait_linked(server)
        engine = await server.builtin.services.browser.engine()
        tab = await engine.open_tab(team_id, Partition.shared(), url=site.url("/board"))
        member = await peer_member(server, "owner@example.com", folder)
        connection = await member.connect(host_id)
        view = await open_view(connection, tab.id, cursor=True, menu=True)
        await view.next_frame()
        yield Viewing(connection, view)
        view.close()
        await connection.close()
        await member.hub.close()


fraction = st.floats(min_value=0.0, max_value=1.0)
view_messages = st.one_of(
    st.sampled_from([{"type": t} for t in ("take", "release", "copy", "cut", "select-all")]),
    st.fixed_dictionaries(
        {
            "type": st.just("pointer"),
            "action": st.sampled_from(["move", "down", "up", "wheel"]),
            "x": fraction,
            "y": fraction,
        },
        optional={
            "button": st.sampled_from(["none", "left", "middle", "right"]),
            "clickCount": st.integers(0, 3),
            "modifiers": st.integers(0, 15),
            "deltaX": st.floats(-10000, 10000),
            "deltaY": st.floats(-10000, 10000),
        },
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("key"),
            "action": st.sampled_from(["down", "up", "char"]),
            "key": st.sampled_from(["a", "Enter", "Tab", "Backspace", "ArrowLeft", "F5"])
            | st.text(max_size=32),
        },
        optional={
            "code": st.text(max_size=32),
            "text": st.text(max_size=8),
            "modifiers": st.integers(0, 15),
            "repeat": st.booleans(),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("text"), "text": st.text(min_size=1, max_size=MAX_TYPED_TEXT // 64)}
    ),
    st.fixed_dictionaries({"type": st.just("paste"), "text": st.text(max_size=200)}),
    st.fixed_dictionaries(
        {
            "type": st.just("menu-choice"),
            "menuId": st.integers(0, 5),
            "item": st.sampled_from(["copy-link", "copy", "paste", "select-all", "back"]),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("viewport"),
            "width": st.integers(200, 4096),
            "height": st.integers(200, 4096),
        }
    ),
)


@st.composite
def extreme_view_messages(draw: st.DrawFn) -> str:
    message: dict[str, Any] = draw(view_messages)
    changed = with_extremes(draw, message)
    if isinstance(changed, dict) and draw(st.booleans()):
        changed["type"] = message["type"]  # most keep their type, so the fields are what is odd
    return encode_hostile(changed)


async def answers_until_released(view: LiveView) -> list[dict[str, Any]]:
    """What the host answered before a ``release`` sent now: the view handles its messages in
    order, so everything sent before it has been handled once it is answered."""
    view.send({"type": "release"})
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(ANSWER_SECONDS):
        while True:
            message = await view.messages.get()
            if message.get("type") == "held" and message.get("byYou") is False:
                return seen
            seen.append(message)


async def still_viewing(viewing: Viewing) -> None:
    assert viewing.view.channel.readyState == "open"
    assert not viewing.view.closed.is_set()
    assert (await viewing.connection.call("capabilities"))["protocol"] == 1


def drain(view: LiveView) -> None:
    while not view.messages.empty():
        view.messages.get_nowait()


FUZZ = settings(
    max_examples=examples(20, 500),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


@FUZZ
@given(messages=st.lists(extreme_view_messages(), min_size=1, max_size=6))
async def test_extreme_view_messages_break_nothing(
    viewing: Viewing, caplog: pytest.LogCaptureFixture, messages: list[str]
) -> None:
    caplog.set_level(logging.ERROR)
    drain(viewing.view)
    viewing.view.send({"type": "take"})
    for message in messages:
        viewing.view.channel.send(message)
    for answer in await answers_until_released(viewing.view):
        if answer.get("type") == "error":
            assert answer["code"] in DECLARED, answer
    await still_viewing(viewing)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@FUZZ
@given(
    messages=st.lists(
        unreadable.filter(lambda m: isinstance(m, bytes) or '"type"' not in m),
        min_size=1,
        max_size=5,
    )
)
async def test_unreadable_view_messages_are_each_refused_once(
    viewing: Viewing, caplog: pytest.LogCaptureFixture, messages: list[str | bytes]
) -> None:
    caplog.set_level(logging.ERROR)
    drain(viewing.view)
    for message in messages:
        viewing.view.channel.send(message)
    answers = await answers_until_released(viewing.view)
    errors = [a for a in answers if a.get("type") == "error"]
    assert len(errors) == len(messages), answers
    assert {e["code"] for e in errors} <= DECLARED
    await still_viewing(viewing)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
