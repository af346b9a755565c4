"""Live view over real aiortc peers and real Chromium: one hub, host and browser for the
module, a tab of its own for each test."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from peer.live_view import LiveView, ViewClosed, open_view
from server.common.protocol.view import ViewOptions
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.protection import protect, release
from server.host.live import screencast, views
from server.host.live.screencast import BACKLOG_BYTES
from server.host.live.views import TAB_HOLDS_SECRET
from server.host.tools.browser.set_environment import SetEnvironmentArgs, set_environment
from server.host.tools.context import ToolContext
from tests.host.live.conftest import LiveWorld, Watching, watching_in
from tests.support.clock import FakeClock
from tests.support.loop_watch import module_loop_watch  # noqa: F401 - a fixture
from tests.support.peers import ignore_max_message_size, peer_member
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module")
async def watching(live_world: LiveWorld) -> AsyncIterator[Watching]:
    async with watching_in(live_world) as watched:
        yield watched


@pytest.fixture
def site(live_world: LiveWorld) -> Site:
    return live_world.site


def jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from a JPEG's start-of-frame marker."""
    stream = io.BytesIO(data)
    assert stream.read(2) == b"\xff\xd8"
    while True:
        marker, length = stream.read(2), int.from_bytes(stream.read(2), "big")
        if marker[1] in (0xC0, 0xC1, 0xC2):
            stream.read(1)
            height, width = (
                int.from_bytes(stream.read(2), "big"),
                int.from_bytes(stream.read(2), "big"),
            )
            return width, height
        stream.read(length - 2)


async def test_frames_arrive_as_jpeg_with_the_headers_size(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    assert frame.jpeg[:2] == b"\xff\xd8"
    assert jpeg_size(frame.jpeg) == (frame.width, frame.height)
    second = await view.next_frame() if not view.frames.empty() else frame
    assert second.sequence >= frame.sequence
    view.close()


async def test_a_click_in_fractions_lands_on_the_button(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    view.click(100 / frame.width, 50 / frame.height)
    page = watching.tab.page
    assert page is not None
    await page.wait_for_function("document.getElementById('b').textContent === 'clicked'")
    view.close()


async def test_typing_and_paste_reach_the_input(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    view.click(150 / frame.width, 170 / frame.height)
    view.type_text("hi ")
    view.paste("there")
    page = watching.tab.page
    assert page is not None
    await page.wait_for_function("document.getElementById('field').value === 'hi there'")
    view.close()


async def test_a_message_over_the_limit_in_bytes_is_refused_and_the_view_stays_open(
    watching: Watching,
) -> None:
    ignore_max_message_size(watching.connection)
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    text = "\u20ac" * 400_000  # 400,000 characters, under the limit; 1,200,000 bytes, over it
    view.channel.send(json.dumps({"type": "paste", "text": text}, ensure_ascii=False))
    assert (await view.expect("error"))["code"] == "messageTooLarge"
    await view.take()  # still answered
    view.close()


SELECT_WORDS = (
    "(text) => { const words = document.getElementById('words');"
    " if (text !== null) words.textContent = text; const r = document.createRange();"
    " r.selectNodeContents(words); getSelection().removeAllRanges();"
    " getSelection().addRange(r); }"
)


async def holding_a_selection(watching: Watching, text: str | None = None) -> LiveView:
    """A view of the tab that holds it, with the page's words (``text`` if given) selected."""
    page = watching.tab.page
    assert page is not None
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    await view.take()
    await page.evaluate(SELECT_WORDS, text)
    return view


async def test_copy_returns_the_selection_and_refuses_above_a_mebibyte(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    view = await holding_a_selection(watching)
    assert await view.copy() == {"type": "copied", "text": "select these words"}
    await page.evaluate(
        "() => { const f = document.getElementById('field'); f.value = 'x'.repeat(1048577);"
        " f.focus(); f.select(); }"
    )
    too_large = await view.copy()
    assert too_large["type"] == "copyTooLarge"
    assert too_large["size"] == 1048577
    view.close()


async def test_a_right_click_on_a_link_offers_a_menu_and_a_script_link_offers_none(
    watching: Watching,
) -> None:
    view = await open_view(watching.connection, watching.tab.id, menu=True)
    frame = await view.next_frame()
    await view.take()
    view.pointer("down", 100 / frame.width, 270 / frame.height, button="right")
    view.pointer("up", 100 / frame.width, 270 / frame.height, button="right")
    menu = await view.expect("context-menu")
    assert menu["link"] == "http://127.0.0.1:1/elsewhere"
    assert menu["items"][:2] == ["open-link", "copy-link"]
    view.send({"type": "menu-choice", "menuId": menu["menuId"], "item": "copy-link"})
    assert (await view.expect("copied"))["text"] == "http://127.0.0.1:1/elsewhere"

    view.pointer("down", 100 / frame.width, 340 / frame.height, button="right")
    script_menu = await view.expect("context-menu")
    assert script_menu["link"] is None
    assert "open-link" not in script_menu["items"]
    view.close()


async def test_the_cursor_message_changes_over_a_link(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id, cursor=True)
    frame = await view.next_frame()
    view.pointer("move", 400 / frame.width, 600 / frame.height)
    assert (await view.expect("cursor"))["cursor"] == "auto"
    view.pointer("move", 100 / frame.width, 270 / frame.height)
    assert (await view.expect("cursor"))["cursor"] == "pointer"
    view.close()


async def test_the_viewport_applies_and_is_restored(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    before = await page.evaluate("[innerWidth, innerHeight]")
    view = await open_view(watching.connection, watching.tab.id, viewport=(640, 480))
    assert await page.evaluate("[innerWidth, innerHeight]") == [640, 480]
    frame = await view.next_frame()
    while (frame.width, frame.height) != (640, 480):
        frame = await view.next_frame()
    view.close()
    await asyncio.wait_for(view.closed.wait(), 10)
    screencasts = watching.server.builtin.services.live
    await eventually(
        lambda: not (screencasts.screencast(watching.team_id, watching.tab.id) is not None)
    )
    assert await page.evaluate("[innerWidth, innerHeight]") == before


async def test_a_size_set_with_set_environment_outlasts_every_view(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    size = "[innerWidth, innerHeight]"
    view = await open_view(watching.connection, watching.tab.id, viewport=(640, 480))
    assert await page.evaluate(size) == [640, 480]
    # Set while a view holds its own size, the agent's size wins over it.
    caller = Caller.person(watching.member.account_id)
    context = ToolContext(engine=watching.engine, team_id=watching.team_id, caller=caller)
    args = {"tabId": watching.tab.id, "viewport": {"width": 390, "height": 844}}
    result = await set_environment(context, SetEnvironmentArgs.model_validate(args))
    assert result["ok"] is True
    view.resize(800, 500)
    await view.take()  # answered once the resize before it was handled
    assert await page.evaluate(size) == [390, 844]
    view.close()
    live = watching.server.builtin.services.live
    await eventually(lambda: live.screencast(watching.team_id, watching.tab.id) is None)
    assert await page.evaluate(size) == [390, 844]  # not the size from before the view
    again = await open_view(watching.connection, watching.tab.id, viewport=(700, 500))
    assert await page.evaluate(size) == [390, 844]
    again.close()


async def test_a_resize_message_moves_the_viewport_while_open(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    view = await open_view(watching.connection, watching.tab.id, viewport=(640, 480))
    await view.next_frame()
    view.resize(800, 500)
    frame = await view.next_frame()
    while (frame.width, frame.height) != (800, 500):
        frame = await view.next_frame()
    assert await page.evaluate("[innerWidth, innerHeight]") == [800, 500]
    view.resize(100, 100)
    assert (await view.expect("error"))["code"] == "invalidArgument"
    view.close()


async def test_a_watcher_who_does_not_hold_the_tab_cannot_send_input(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    view.pointer("down", 100 / frame.width, 50 / frame.height, button="left")
    assert (await view.expect("error"))["code"] == "notHolding"
    view.paste("nope")
    assert (await view.expect("error"))["code"] == "notHolding"
    page = watching.tab.page
    assert page is not None
    assert await page.evaluate("document.getElementById('b').textContent") == "press"
    view.close()


async def test_a_second_person_cannot_take_a_held_tab(watching: Watching) -> None:
    watching.engine.take_control(watching.team_id, watching.tab.id, "someone-else")
    view = await open_view(watching.connection, watching.tab.id)
    view.send({"type": "take"})
    assert (await view.expect("error"))["code"] == "tabHeld"
    view.close()


async def test_a_viewer_may_have_two_of_the_largest_messages_waiting_and_no_more(
    watching: Watching,
) -> None:
    ignore_max_message_size(watching.connection)
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    await view.take()
    page = watching.tab.page
    assert page is not None
    await page.evaluate("() => { setTimeout(() => alert('wait'), 0); }")
    await eventually(lambda: watching.tab.dialog is not None)
    view.send({"type": "copy"})  # handled, and waiting for the page the dialog holds
    caller = Caller.person(watching.member.account_id)
    try:
        for _ in range(3):  # the third would make more than two of the largest waiting
            view.paste("a" * 1_000_000)
        assert (await view.expect("error"))["code"] == "rateLimited"
    finally:
        await watching.engine.handle_dialog(watching.team_id, watching.tab.id, False, caller=caller)
    assert (await view.expect("copied"))["text"] == ""
    await view.take()  # the channel stayed open, and its next message is answered
    view.close()


async def test_the_last_view_closing_ends_the_screencast_while_a_dialog_shows(
    watching: Watching, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(screencast, "DETACH_SECONDS", 0.2)
    live = watching.server.builtin.services.live
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    page = watching.tab.page
    assert page is not None
    await page.evaluate("() => { setTimeout(() => alert('unanswered'), 0); }")
    await eventually(lambda: watching.tab.dialog is not None)
    view.close()
    try:
        # Nobody answers the dialog, and the view still ends: its screencast goes too.
        await eventually(lambda: live.table_sizes()["screencasts"] == 0)
        assert watching.tab.dialog is not None
    finally:
        caller = Caller.person(watching.member.account_id)
        await watching.engine.handle_dialog(watching.team_id, watching.tab.id, False, caller=caller)


async def test_a_connection_may_have_so_many_views_open_and_no_more(
    watching: Watching, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "MAX_VIEWS_PER_PEER", 2)
    first = await open_view(watching.connection, watching.tab.id)
    second = await open_view(watching.connection, watching.tab.id)
    with pytest.raises(ViewClosed) as refused:
        await open_view(watching.connection, watching.tab.id)
    assert refused.value.code == "viewLimit"
    first.close()
    live = watching.server.builtin.services.live
    await eventually(lambda: len(live.sessions(watching.team_id, watching.tab.id)) == 1)
    third = await open_view(watching.connection, watching.tab.id)  # room again
    second.close()
    third.close()


async def test_holding_ends_when_the_channel_closes(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    await view.take()
    assert watching.tab.held_by == watching.member.account_id
    view.close()
    await asyncio.wait_for(view.closed.wait(), 10)
    await eventually(lambda: watching.tab.held_by is None)


async def test_two_views_of_one_member_both_hold_until_either_lets_go(
    watching: Watching,
) -> None:
    first = await open_view(watching.connection, watching.tab.id)
    second = await open_view(watching.connection, watching.tab.id)
    frame = await second.next_frame()
    await first.take()
    await second.take()  # the member holds the tab already: this view holds it too
    page = watching.tab.page
    assert page is not None
    second.click(150 / frame.width, 170 / frame.height)
    second.type_text("a")
    await page.wait_for_function("document.getElementById('field').value === 'a'")

    await first.release()  # the member gives the tab back: no view of theirs holds it
    assert watching.tab.held_by is None
    assert (await second.expect("held"))["byYou"] is False  # told at once
    second.type_text("b")
    assert (await second.expect("error"))["code"] == "notHolding"
    assert await page.evaluate("document.getElementById('field').value") == "a"
    first.close()
    second.close()


EVENT_LOG = (
    "() => { window.seen = []; for (const type of ['mousedown', 'mouseup', 'keyup'])"
    " document.addEventListener(type, (e) => window.seen.push(`${type} ${e.key ?? e.buttons}`));"
    " }"
)


async def test_letting_go_lifts_what_the_view_held_down_on_the_page(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    await page.evaluate(EVENT_LOG)
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    x, y = 5 / frame.width, 410 / frame.height  # on the words
    await view.take()
    view.key("down", "Shift", code="ShiftLeft", modifiers=8)
    view.pointer("down", x, y, button="left", clickCount=1)
    view.pointer("move", x + 60 / frame.width, y)  # selecting words, until the member lets go
    await page.wait_for_function("window.seen.includes('mousedown 1')")
    await view.release()
    await page.wait_for_function("window.seen.join() === 'mousedown 1,mouseup 0,keyup Shift'")

    await view.take()
    view.pointer("down", x, y, button="left", clickCount=1)
    await page.wait_for_function("window.seen.length === 4")
    view.close()  # holding ends with the channel: the button comes up too
    await page.wait_for_function("window.seen.slice(3).join() === 'mousedown 1,mouseup 0'")


async def test_a_press_cut_short_presses_nothing(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    await page.evaluate(
        "() => { const b = document.createElement('button'); b.id = 'pressed';"
        " b.style = 'position:fixed;left:0;top:0;width:120px;height:60px;z-index:9';"
        " b.onclick = () => { window.clicks = (window.clicks || 0) + 1; };"
        " document.body.append(b); window.clicks = 0; window.ups = 0;"
        " document.addEventListener('mouseup', () => { window.ups += 1; }); }"
    )
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    view.pointer("down", 60 / frame.width, 30 / frame.height, button="left", clickCount=1)
    await page.wait_for_function("document.activeElement.id === 'pressed'")
    await view.release()  # control goes before the member lets the button up
    # The page hears the button come up, and the press it cut short clicks nothing.
    await page.wait_for_function("window.ups === 1")
    assert await page.evaluate("window.clicks") == 0
    view.close()


async def test_another_team_cannot_open_the_view(watching: Watching, tmp_path: Path) -> None:
    server = watching.server
    await server.create_owner("b@example.com", "Team B")
    outsider = await peer_member(server, "b@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    with pytest.raises(ViewClosed) as caught:
        await open_view(connection, watching.tab.id)
    assert caught.value.code == "tabNotFound"
    with pytest.raises(ViewClosed) as malformed:
        await open_view(connection, "not-a-tab")
    assert malformed.value.code == "viewLabelInvalid"
    await connection.close()
    await outsider.hub.close()


async def test_a_refused_view_says_why_before_the_host_closes_it(
    watching: Watching, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A peer that reads the reason and stays is closed by the host after a grace; the
    reason always comes first (a browser may drop it when the close comes with it)."""
    monkeypatch.setattr(views, "REFUSED_CLOSE_SECONDS", 0.2)
    channel = watching.connection.connection.createDataChannel(f"view:{uuid.uuid4()}")
    said: list[str | bytes] = []
    closed = asyncio.Event()
    channel.on("message", said.append)
    channel.on("close", closed.set)
    await asyncio.wait_for(closed.wait(), 10)
    assert [json.loads(m)["code"] for m in said] == ["tabNotFound"]


async def test_the_screencast_stops_after_the_last_viewer(watching: Watching) -> None:
    live = watching.server.builtin.services.live
    first = await open_view(watching.connection, watching.tab.id)
    second = await open_view(watching.connection, watching.tab.id)
    await first.next_frame()
    screencast = live.screencast(watching.team_id, watching.tab.id)
    assert screencast is not None
    assert len(screencast.viewers) == 2
    first.close()
    await asyncio.wait_for(first.closed.wait(), 10)
    await eventually(lambda: len(screencast.viewers) == 1)
    running_for_one = screencast.running
    assert running_for_one
    second.close()
    await eventually(lambda: live.screencast(watching.team_id, watching.tab.id) is None)
    assert not screencast.running
    assert watching.tab.viewers == 0


async def test_a_secret_ends_every_view_at_once(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    live = watching.server.builtin.services.live
    await live.end_views(
        watching.team_id, watching.tab.id, TAB_HOLDS_SECRET, "the tab holds a secret"
    )
    await asyncio.wait_for(view.closed.wait(), 10)
    assert view.close_code == TAB_HOLDS_SECRET


async def test_a_view_of_a_tab_that_holds_a_secret_is_refused_at_open(
    watching: Watching,
) -> None:
    assert watching.tab.page is not None
    await protect(watching.tab, watching.tab.page, "http://127.0.0.1", watching.engine.signals)
    try:
        with pytest.raises(ViewClosed) as refused:
            await open_view(watching.connection, watching.tab.id)
    finally:
        await release(watching.tab)
    assert refused.value.code == TAB_HOLDS_SECRET
    assert watching.tab.viewers == 0


ROOT = Path(__file__).resolve().parents[3]
SLOW_VIEWER = """
import asyncio, sys
from pathlib import Path
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts
from peer.connection import connect_to_host
from peer.live_view import open_view

async def main(hub_url, token, account, team, host, tab, home):
    hub = HubClient(hub_url, token)
    connection = await connect_to_host(hub, team, host, KnownHosts(Path(home) / "k.json"), account)
    view = await open_view(connection, tab)
    await view.next_frame()
    print("ready", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main(*sys.argv[1:]))
"""


async def test_a_stalled_viewer_neither_slows_another_nor_grows_the_hosts_memory(
    watching: Watching, site: Site, tmp_path: Path
) -> None:
    server, engine = watching.server, watching.engine
    tab = await engine.open_tab(watching.team_id, Partition.shared(), url=site.url("/animated"))
    stalled_peer = await peer_member(server, "owner@example.com", tmp_path)
    assert stalled_peer.hub.token is not None
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SLOW_VIEWER,
        server.url,
        stalled_peer.hub.token,
        stalled_peer.account_id,
        watching.team_id,
        server.builtin.services.host_id,
        tab.id,
        str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None
    try:
        assert (await asyncio.wait_for(process.stdout.readline(), 60)).strip() == b"ready"
        fast = await open_view(watching.connection, tab.id)
        screencast = server.builtin.services.live.screencast(watching.team_id, tab.id)
        assert screencast is not None
        process.send_signal(signal.SIGSTOP)  # it stops reading: its SCTP window fills
        live = server.builtin.services.live
        stalled = next(
            session.viewer
            for session in live.sessions(watching.team_id, tab.id)
            if session.peer.account_id == stalled_peer.account_id
        )
        before = (await fast.next_frame()).sequence
        # The fast viewer keeps getting new frames while the other is stalled...
        while stalled.replaced < 20:
            frame = await fast.next_frame()
            assert frame.sequence > before
            before = frame.sequence
        # ...and the stalled one costs at most one waiting frame beyond the backlog bound.
        assert stalled.channel.bufferedAmount <= BACKLOG_BYTES + len(frame.jpeg) + 1024
        assert stalled.pending is not None
        fast.close()
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        await process.wait()
        await stalled_peer.hub.close()


async def test_select_all_cut_and_open_link_from_the_menu(watching: Watching, site: Site) -> None:
    page = watching.tab.page
    assert page is not None
    view = await open_view(watching.connection, watching.tab.id, menu=True)
    frame = await view.next_frame()
    await view.take()
    view.click(150 / frame.width, 170 / frame.height)
    view.paste("cut me")
    await page.wait_for_function("document.getElementById('field').value === 'cut me'")
    view.send({"type": "select-all"})
    assert await view.copy("cut") == {"type": "copied", "text": "cut me"}
    await page.wait_for_function("document.getElementById('field').value === ''")

    await page.evaluate("url => { document.getElementById('link').href = url; }", site.url("/big"))
    view.pointer("down", 100 / frame.width, 270 / frame.height, button="right")
    menu = await view.expect("context-menu")
    view.send({"type": "menu-choice", "menuId": menu["menuId"], "item": "open-link"})
    opened = await view.expect("opened")
    new_tab = watching.engine.get_tab(watching.team_id, opened["tabId"])
    assert new_tab.partition == watching.tab.partition
    assert new_tab.url == site.url("/big")
    view.send({"type": "menu-choice", "menuId": menu["menuId"], "item": "copy"})
    assert (await view.expect("error"))["code"] == "menuGone"  # a menu is chosen from once
    view.close()


async def test_back_and_forward_from_the_menu_move_the_tab_through_its_history(
    watching: Watching, site: Site
) -> None:
    before = Caller.person("someone-before")
    await watching.engine.navigate(watching.team_id, watching.tab.id, before, site.url("/big"))
    view = await open_view(watching.connection, watching.tab.id, menu=True)
    frame = await view.next_frame()
    await view.take()

    async def choose(item: str) -> None:
        view.pointer("down", 500 / frame.width, 300 / frame.height, button="right")
        menu = await view.expect("context-menu")
        assert menu["items"][-3:] == ["back", "forward", "reload"]
        view.send({"type": "menu-choice", "menuId": menu["menuId"], "item": item})

    await choose("back")
    await eventually(lambda: watching.tab.url == site.url("/board"))
    await choose("forward")
    await eventually(lambda: watching.tab.url == site.url("/big"))
    await choose("reload")
    await eventually(lambda: watching.tab.url == site.url("/big"))
    assert watching.tab.held_by is not None  # the steps ran as the holder's, in the tab's queue
    view.close()


async def test_nothing_is_copied_from_a_field_that_shows_dots(watching: Watching) -> None:
    page = watching.tab.page
    assert page is not None
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    for dots in ("field.type = 'password'", "field.style.webkitTextSecurity = 'disc'"):
        await page.evaluate(f"() => {{ const field = document.getElementById('field'); {dots}; }}")
        view.click(150 / frame.width, 170 / frame.height)
        view.paste("not for the clipboard")
        await page.wait_for_function(
            "document.getElementById('field').value === 'not for the clipboard'"
        )
        view.send({"type": "select-all"})
        assert await view.copy() == {"type": "copied", "text": ""}
        await page.evaluate(
            "() => { const field = document.getElementById('field'); field.type = 'text';"
            " field.style.webkitTextSecurity = ''; field.value = ''; }"
        )
    view.paste("plain")  # the same field, showing its text again, copies as before
    await page.wait_for_function("document.getElementById('field').value === 'plain'")
    view.send({"type": "select-all"})
    assert await view.copy() == {"type": "copied", "text": "plain"}
    await page.evaluate("() => { document.getElementById('field').value = ''; }")
    view.close()


async def test_a_view_follows_its_tab_to_the_page_that_replaces_a_crashed_one(
    watching: Watching,
) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    crashed = watching.tab.page
    assert crashed is not None
    session = await crashed.context.new_cdp_session(crashed)
    crash = asyncio.ensure_future(session.send("Page.crash"))
    await eventually(lambda: watching.tab.crashed)
    crash.cancel()
    assert (await view.expect("error"))["code"] == "pageCrashed"
    # A member presses Reload: the tab gets a new page, and the view goes with it.
    await watching.connection.call("browser-control-v1/reload", {"tabId": watching.tab.id})
    live = watching.server.builtin.services.live
    await eventually(
        lambda: (
            (cast := live.screencast(watching.team_id, watching.tab.id)) is not None
            and cast.page is watching.tab.page
            and cast.page is not crashed
        )
    )
    while not view.frames.empty():
        view.frames.get_nowait()
    frame = await view.next_frame()
    assert frame.jpeg[:2] == b"\xff\xd8"
    await view.take()
    view.click(100 / frame.width, 50 / frame.height)
    page = watching.tab.page
    assert page is not None
    await page.wait_for_function("document.getElementById('b').textContent === 'clicked'")
    view.close()


async def _put_to_sleep(watching: Watching, tab_id: str) -> None:
    clock = watching.server.builtin.services.clock
    assert isinstance(clock, FakeClock)
    clock.advance(16 * 60)
    assert tab_id in await watching.engine.tick()


async def test_a_page_answer_a_message_cannot_carry_leaves_the_view_working(
    watching: Watching,
) -> None:
    """A selection cut in the middle of an emoji (a lone half of a surrogate pair) is
    copied with U+FFFD in its place, and the viewer's next messages are still handled."""
    # The page makes the lone half itself: Python's side could not send it as JSON.
    view = await holding_a_selection(watching, None)
    page = watching.tab.page
    assert page is not None
    await page.evaluate("() => { document.getElementById('words').textContent = 'ab\\ud83d'; }")
    await page.evaluate(SELECT_WORDS, None)
    assert await view.copy() == {"type": "copied", "text": "ab\ufffd"}
    await view.release()
    assert watching.tab.held_by is None
    view.close()


async def test_an_asleep_tab_that_no_longer_loads_is_refused_and_left_unheld(
    watching: Watching,
) -> None:
    async with serving(pages_app({"/gone": "<!doctype html><title>soon gone</title>"})) as gone:
        tab = await watching.engine.open_tab(
            watching.team_id, Partition.shared(), url=gone.url("/gone")
        )
    await _put_to_sleep(watching, tab.id)  # its site stopped: waking it will not load
    with pytest.raises(ViewClosed) as refused:
        await open_view(watching.connection, tab.id, take=True)
    assert refused.value.code == "pageUnavailable"
    assert tab.held_by is None
    assert tab.viewers == 0


async def test_a_view_closed_while_its_tab_wakes_leaves_no_hold_or_viewer(
    watching: Watching,
) -> None:
    answer = asyncio.Event()
    asked = asyncio.Event()
    answer.set()

    async def slow(_request: web.Request) -> web.Response:
        asked.set()
        await answer.wait()
        return web.Response(text="<title>slow</title>", content_type="text/html")

    async with serving(pages_app({}, routes={"/slow": slow})) as site:
        tab = await watching.engine.open_tab(
            watching.team_id, Partition.shared(), url=site.url("/slow")
        )
        await _put_to_sleep(watching, tab.id)
        answer.clear()
        asked.clear()
        label = ViewOptions(tab.id, take=True).label()
        channel = watching.connection.connection.createDataChannel(label, ordered=True)
        await asyncio.wait_for(asked.wait(), 15)  # the host is waking the tab for the view
        assert tab.held_by == watching.member.account_id
        channel.close()
        answer.set()
        await eventually(lambda: tab.held_by is None and tab.loaded)
    assert tab.viewers == 0
    live = watching.server.builtin.services.live
    assert live.screencast(watching.team_id, tab.id) is None


async def test_the_views_of_a_tab_that_closes_end_saying_so(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    await view.next_frame()
    caller = Caller.person(watching.member.account_id)
    await watching.engine.close_tab(watching.team_id, watching.tab.id, caller)
    await asyncio.wait_for(view.closed.wait(), 10)
    assert view.close_code == "tabNotFound"
    live = watching.server.builtin.services.live
    await eventually(lambda: live.sessions(watching.team_id, watching.tab.id) == [])
