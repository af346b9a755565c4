"""Steering a tab from the web client as one steers a browser, in real Chromium at both ends.

A person holds a tab in the live view and uses the keyboard and mouse as on any page:
editing keys and shortcuts edit, text in any script arrives whole, the mouse selects text
(drag, double and triple click), Ctrl+C and Ctrl+X copy, and notices float over the view
without resizing the page. What the remote page holds is read from the page itself: it
reports its state to the fixture site whenever that changes.

One ``crewhost serve``, one browser and one live view serve the whole module; each test
starts from the page reloaded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from playwright.async_api import Page, async_playwright, expect

from peer.connection import HostConnection
from tests.e2e.test_web_client import (
    CLIENT_POINT,
    FRAME_MS,
    LIVE_CANVAS,
    follows_panel,
    open_host_screen,
)
from tests.support.chromium import launch_chromium
from tests.support.loop_watch import watch_event_loop
from tests.support.sites import pages_app, serving
from tests.support.web_client import (
    DESKTOP,
    NEW_TAB_SECONDS,
    Crewhost,
    HubApi,
    Screens,
    owner_peer,
    sign_in_context,
    until,
)

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

NOTICE_MS = 15_000
NOTICE_OVER_VIEW = """() => {
  const notice = document.querySelector('.view-notice').getBoundingClientRect();
  const view = document.querySelector('canvas[aria-label="Live view"]').getBoundingClientRect();
  return notice.top >= view.top && notice.bottom <= view.bottom;
}"""
NOTHING_TO_COPY = "Nothing is selected on the page, so there is nothing to copy."
PARAGRAPH = "alpha bravo charlie delta echo"

# A text area, a field and a paragraph of words at fixed shares of the viewport. The page
# tells the site what it holds (and where its words are) each time that changes; ``doc``
# tells one load from the next.
STEER_PAGE = f"""<!doctype html>
<title>Steer</title>
<style>
  html, body {{ margin: 0; height: 100%; background: #fff; font: 24px/1.4 sans-serif }}
  #area {{ position: fixed; left: 5vw; top: 5vh; width: 50vw; height: 30vh; font: 22px monospace }}
  #field {{ position: fixed; left: 60vw; top: 5vh; width: 30vw; font-size: 22px }}
  #words {{ position: fixed; left: 5vw; top: 50vh; width: 90vw; margin: 0; font: 30px sans-serif }}
  #more {{ position: fixed; left: 5vw; top: 75vh; margin: 0; font: 30px sans-serif }}
</style>
<textarea id="area" autocomplete="off"></textarea>
<input id="field" autocomplete="off">
<p id="words">{" ".join(f'<span id="w{n}">{w}</span>' for n, w in enumerate(PARAGRAPH.split()))}</p>
<p id="more">another paragraph</p>
<script>
  const doc = Math.random().toString(36).slice(2);
  let sequence = 0;
  let last = '';
  function box(element) {{
    const r = element.getBoundingClientRect();
    return [r.left / innerWidth, r.top / innerHeight, r.width / innerWidth, r.height / innerHeight];
  }}
  function report() {{
    const area = document.getElementById('area');
    const words = {{}};
    for (const word of document.querySelectorAll('#words span')) words[word.id] = box(word);
    const state = JSON.stringify({{
      doc,
      value: area.value,
      start: area.selectionStart,
      end: area.selectionEnd,
      field: document.getElementById('field').value,
      active: document.activeElement ? document.activeElement.id : '',
      selection: String(getSelection()),
      width: innerWidth,
      height: innerHeight,
      area: box(area),
      words,
    }});
    if (state !== last) {{
      last = state;
      sequence += 1;
      fetch('/report?n=' + sequence + '&state=' + encodeURIComponent(state));
    }}
  }}
  setInterval(report, 25);
  report();
</script>
"""


@dataclass
class Reports:
    """What the steered page last reported: the newest load's newest report, and every
    viewport size the page has had."""

    state: dict[str, Any] = field(default_factory=dict)
    sizes: list[tuple[int, int]] = field(default_factory=list)
    _docs: list[str] = field(default_factory=list)
    _sequence: int = 0

    async def handle(self, request: web.Request) -> web.Response:
        number, state = int(request.query["n"]), json.loads(request.query["state"])
        if state["doc"] not in self._docs:
            self._docs.append(state["doc"])
            self._sequence = 0
        # A report can overtake another; a load's late report must not hide the next load.
        if state["doc"] == self._docs[-1] and number > self._sequence:
            self._sequence, self.state = number, state
            size = (state["width"], state["height"])
            if not self.sizes or self.sizes[-1] != size:
                self.sizes.append(size)
        return web.Response(status=204)


@dataclass
class Steering:
    """The module's member, holding the tab of the steered page in the live view."""

    page: Page
    agent: HostConnection
    tab_id: str
    reports: Reports

    async def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The page's state, once ``check`` holds for it."""
        await until(lambda: _holds(check, self.reports.state))
        return self.reports.state

    async def point(self, fx: float, fy: float) -> tuple[float, float]:
        """Where a fraction of the remote page is on this screen."""
        at = await self.page.evaluate(CLIENT_POINT, [LIVE_CANVAS, fx, fy])
        return at["x"], at["y"]

    async def click(self, fx: float, fy: float, **options: Any) -> None:
        await self.page.mouse.click(*await self.point(fx, fy), **options)

    async def word(self, name: str, across: float = 0.5) -> tuple[float, float]:
        """A point on one of the paragraph's words, ``across`` its width."""
        left, top, width, height = self.reports.state["words"][name]
        return await self.point(left + across * width, top + height / 2)

    async def into_area(self) -> None:
        left, top, width, height = self.reports.state["area"]
        await self.click(left + width / 2, top + height / 2)
        await self.until(lambda s: s["active"] == "area")

    async def fresh_page(self) -> None:
        """Reload the steered page from the view's toolbar, as the person would."""
        before = self.reports.state.get("doc")
        await self.page.get_by_role("button", name="Reload").click()
        await self.until(lambda s: s["doc"] != before and s["value"] == "" and s["width"] > 0)

    async def clipboard(self) -> str:
        return str(await self.page.evaluate("navigator.clipboard.readText()"))


async def _holds(check: Callable[[dict[str, Any]], bool], state: dict[str, Any]) -> bool:
    return bool(state) and check(state)


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    """The suite's watchdog, on this module's loop (the tests run in it)."""
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def steering(
    crewhost: Crewhost, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Steering]:
    reports = Reports()
    async with AsyncExitStack() as stack:
        site = await stack.enter_async_context(
            serving(pages_app({"/steer": STEER_PAGE}, routes={"/report": reports.handle}))
        )
        api = HubApi(crewhost)
        stack.push_async_callback(api.close)
        team = await api.new_team("Steering crew")
        playwright = await stack.enter_async_context(async_playwright())
        browser = await launch_chromium(playwright)
        stack.push_async_callback(browser.close)
        context = await browser.new_context(viewport=DESKTOP)
        await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=crewhost.url)
        await sign_in_context(context, crewhost, team.owner_email)
        page = await context.new_page()
        await open_host_screen(page, crewhost, team)
        agent = await stack.enter_async_context(
            owner_peer(team, tmp_path_factory.mktemp("steering"))
        )
        opened = await agent.call(
            "browser-control-v1/new_tab", {"url": site.url("/steer")}, wait_seconds=NEW_TAB_SECONDS
        )
        await page.get_by_role("list", name="Tabs").get_by_role("button").click()
        await expect(page.locator(LIVE_CANVAS)).to_be_visible(timeout=FRAME_MS)
        await page.get_by_role("button", name="Take control").click()
        await expect(page.get_by_role("button", name="Release")).to_be_visible()
        steering = Steering(page, agent, opened["id"], reports)
        await steering.until(lambda s: s["width"] > 0)
        yield steering


async def test_editing_keys_and_shortcuts_edit_the_remote_text_area(steering: Steering) -> None:
    keyboard = steering.page.keyboard
    await steering.fresh_page()
    await steering.into_area()

    await keyboard.type("hello world")
    await steering.until(lambda s: s["value"] == "hello world")
    await keyboard.press("Backspace")
    await steering.until(lambda s: s["value"] == "hello worl")
    await keyboard.press("Home")
    await keyboard.press("Delete")
    await steering.until(lambda s: s["value"] == "ello worl" and s["start"] == 0)
    await keyboard.press("End")
    await keyboard.press("ArrowLeft")
    await keyboard.press("ArrowLeft")
    await keyboard.type("X")
    await steering.until(lambda s: s["value"] == "ello woXrl")
    await keyboard.press("Enter")
    await steering.until(lambda s: s["value"] == "ello woX\nrl" and s["start"] == 9)
    await keyboard.press("ArrowUp")
    await steering.until(lambda s: s["start"] < 9)
    await keyboard.press("PageDown")  # to the last line, as in a browser
    await steering.until(lambda s: s["start"] >= 9)
    await keyboard.press("PageUp")
    await steering.until(lambda s: s["start"] <= 8)
    await keyboard.press("End")
    await keyboard.press("Shift+ArrowLeft")
    await keyboard.press("Shift+ArrowLeft")
    await steering.until(lambda s: (s["start"], s["end"]) == (6, 8))

    await keyboard.press("Control+a")
    await steering.until(lambda s: (s["start"], s["end"]) == (0, 11))
    await keyboard.type("new")
    await steering.until(lambda s: s["value"] == "new")
    await keyboard.press("Control+z")
    await steering.until(lambda s: s["value"] == "ello woX\nrl")
    await keyboard.press("Control+y")
    await steering.until(lambda s: s["value"] == "new")
    # A Mac's shortcuts: the host gives them the editing commands Linux Chromium lacks.
    await keyboard.press("Meta+a")
    await steering.until(lambda s: (s["start"], s["end"]) == (0, 3))
    await keyboard.press("Meta+z")
    await steering.until(lambda s: s["value"] == "ello woX\nrl")
    await keyboard.press("Meta+Shift+z")
    await steering.until(lambda s: s["value"] == "new")

    # Tab moves the remote page's focus, not this page's.
    await keyboard.press("Tab")
    await steering.until(lambda s: s["active"] == "field")
    assert await steering.page.evaluate("document.activeElement.ariaLabel") == "Type into the page"


async def test_text_in_any_script_arrives_whole(steering: Steering) -> None:
    keyboard = steering.page.keyboard
    await steering.fresh_page()
    await steering.into_area()
    # Playwright types characters no US key makes as inserted text, as an input method does.
    await keyboard.type("é ß 日本語 😀")
    await steering.until(lambda s: s["value"] == "é ß 日本語 😀")
    await keyboard.insert_text(" Straße")
    await steering.until(lambda s: s["value"] == "é ß 日本語 😀 Straße")

    # An input method's composition reaches the page once, whole, when it ends.
    client = await steering.page.context.new_cdp_session(steering.page)
    await client.send(
        "Input.imeSetComposition", {"text": "にほん", "selectionStart": 3, "selectionEnd": 3}
    )
    await client.send("Input.insertText", {"text": "日本"})
    await steering.until(lambda s: s["value"] == "é ß 日本語 😀 Straße日本")
    await client.detach()
    await keyboard.press("Backspace")
    await steering.until(lambda s: s["value"] == "é ß 日本語 😀 Straße日")


async def test_the_mouse_selects_text_by_drag_double_and_triple_click(
    steering: Steering, screens: Screens
) -> None:
    mouse = steering.page.mouse
    await steering.fresh_page()

    await mouse.dblclick(*await steering.word("w1"))
    await steering.until(lambda s: s["selection"] == "bravo")

    await mouse.click(*await steering.word("w2"), click_count=3)
    await steering.until(lambda s: s["selection"].strip() == PARAGRAPH)

    await mouse.click(*await steering.word("w4"))  # a single click leaves no selection
    await steering.until(lambda s: s["selection"] == "")
    await mouse.move(*await steering.word("w0", across=0.02))
    await mouse.down()
    await mouse.move(*await steering.word("w1"), steps=4)
    await mouse.move(*await steering.word("w2", across=0.98), steps=4)
    await mouse.up()
    selected = await steering.until(lambda s: s["selection"].startswith("alpha bravo charli"))
    assert "delta" not in selected["selection"]
    await screens.save(steering.page, "live-steering-selection", settle=follows_panel)


async def test_copy_and_cut_from_the_keyboard_and_the_toolbar(steering: Steering) -> None:
    page, keyboard = steering.page, steering.page.keyboard
    await steering.fresh_page()
    await page.evaluate("navigator.clipboard.writeText('kept')")

    # Nothing selected: the person is told, and the clipboard keeps what it had.
    await page.get_by_role("button", name="Copy").click()
    await expect(page.get_by_text(NOTHING_TO_COPY)).to_be_visible()
    assert await steering.clipboard() == "kept"
    await page.get_by_role("button", name="Dismiss").click()

    await page.mouse.dblclick(*await steering.word("w3"))
    await steering.until(lambda s: s["selection"] == "delta")
    await keyboard.press("Control+c")
    await until(lambda: _clipboard_holds(steering, "delta"))
    await expect(page.get_by_text("Copied to your clipboard.")).to_be_visible()

    await page.mouse.dblclick(*await steering.word("w1"))
    await steering.until(lambda s: s["selection"] == "bravo")
    await keyboard.press("Meta+c")
    await until(lambda: _clipboard_holds(steering, "bravo"))

    await steering.into_area()
    await keyboard.type("cut me")
    await keyboard.press("Control+a")
    await steering.until(lambda s: (s["start"], s["end"]) == (0, 6))
    await keyboard.press("Control+x")
    await until(lambda: _clipboard_holds(steering, "cut me"))
    await steering.until(lambda s: s["value"] == "")

    # Ctrl+V pastes this computer's clipboard into the page.
    await keyboard.press("Control+v")
    await steering.until(lambda s: s["value"] == "cut me")


async def test_after_a_menu_choice_the_keys_go_to_the_page_again(
    steering: Steering, screens: Screens
) -> None:
    page = steering.page
    await steering.fresh_page()
    await steering.into_area()
    await page.keyboard.type("replace all of this")
    await steering.until(lambda s: s["value"] == "replace all of this")

    left, top, width, height = steering.reports.state["area"]
    await steering.click(left + width / 2, top + height / 2, button="right")
    menu = page.get_by_role("menu", name="Page menu")
    await expect(menu.get_by_role("menuitem", name="Select all")).to_be_visible()
    await screens.save(page, "live-steering-menu", settle=follows_panel)
    await menu.get_by_role("menuitem", name="Select all").click()
    await expect(menu).to_have_count(0)
    await steering.until(lambda s: (s["start"], s["end"]) == (0, 19))
    await page.keyboard.type("done")
    await steering.until(lambda s: s["value"] == "done")


async def test_a_notice_floats_over_the_view_and_fades_without_resizing_the_page(
    steering: Steering, screens: Screens
) -> None:
    page = steering.page
    await steering.fresh_page()
    canvas = page.locator(LIVE_CANVAS)
    before = await canvas.bounding_box()
    sizes_before = len(steering.reports.sizes)

    await page.get_by_role("button", name="Copy").click()
    notice = page.get_by_text(NOTHING_TO_COPY)
    await expect(notice).to_be_visible()
    assert await canvas.bounding_box() == before
    assert await page.evaluate(NOTICE_OVER_VIEW), "the notice is not over the view"
    await expect(notice).to_have_count(0, timeout=NOTICE_MS)
    assert await canvas.bounding_box() == before
    # The panel never changed, so the page was never asked to change size.
    assert len(steering.reports.sizes) == sizes_before

    async def hover_notice(shown: Page) -> None:
        await follows_panel(shown)
        await shown.locator(".view-notice").hover()  # a notice pointed at stays
        # The app's CSP forbids evaluated strings: the locator's own check reads the style.
        await expect(shown.locator(".view-notice")).to_have_css("opacity", "1")

    await page.get_by_role("button", name="Copy").click()
    await expect(notice).to_be_visible()
    await screens.save(page, "live-steering-notice", settle=hover_notice)


async def _clipboard_holds(steering: Steering, text: str) -> bool:
    return await steering.clipboard() == text
