"""Steering keys and the mouse from the Python peer, into real Chromium through the host."""

from __future__ import annotations

from peer.live_view import open_view
from tests.host.live.conftest import Watching


async def test_editing_keys_mac_shortcuts_and_composed_text_edit_the_field(
    watching: Watching,
) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    view.click(150 / frame.width, 170 / frame.height)
    view.type_text("abc")
    for name in ("Backspace", "ArrowLeft"):  # no text, no code: the host finds the key code
        view.key("down", name)
        view.key("up", name)
    view.insert_text("日本😀")
    page = watching.tab.page
    assert page is not None
    await page.wait_for_function("document.getElementById('field').value === 'a日本😀b'")
    view.key("down", "a", code="KeyA", modifiers=4)  # ⌘A: Linux Chromium needs the command
    view.key("up", "a", code="KeyA", modifiers=4)
    view.type_text("x")
    await page.wait_for_function("document.getElementById('field').value === 'x'")
    view.close()


async def test_a_drag_selects_the_words_it_crosses(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    page = watching.tab.page
    assert page is not None
    box = await page.evaluate(
        "(() => { const r = document.getElementById('words').getBoundingClientRect();"
        " return [r.left, r.right, (r.top + r.bottom) / 2]; })()"
    )
    left, right, middle = box
    y = middle / frame.height
    view.pointer("move", (left + 1) / frame.width, y)
    view.pointer("down", (left + 1) / frame.width, y, button="left", clickCount=1)
    view.pointer("move", (left + right) / 2 / frame.width, y)
    view.pointer("move", (right - 1) / frame.width, y)
    view.pointer("up", (right - 1) / frame.width, y, button="left", clickCount=1)
    await page.wait_for_function("String(getSelection()) === 'select these words'")
    view.close()
