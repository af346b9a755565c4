"""Cases only a person settles, found by the host in real Chromium: a passkey prompt, an
account chooser with several accounts, a 3-D Secure challenge frame and a captcha go to
takeover with their code, asked for once per document; a page with none of them does not."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from server.common.protocol.events import BrowserTakeoverRequested, HostEvent
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import TEAM, call, open_page
from tests.support.sites import Site


@pytest.fixture
def asked() -> list[BrowserTakeoverRequested]:
    return []


@pytest.fixture
def heard(context: ToolContext, asked: list[BrowserTakeoverRequested]) -> ToolContext:
    """The agent's context, with the takeover requests the team hears kept in ``asked``."""

    def announce(_team: str, event: HostEvent, *_rest: Any) -> None:
        if isinstance(event, BrowserTakeoverRequested):
            asked.append(event)

    return dataclasses.replace(context, announce=announce)


async def snapshot_of(context: ToolContext, site: Site, path: str) -> tuple[str, dict[str, Any]]:
    tab = await open_page(context, site, path)
    return tab.id, await call(context, "snapshot", tabId=tab.id)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/account-chooser.html", "accountChoice"),
        ("/account-chooser.html?client_id=shop&response_type=code", "accountChoice"),
        ("/three-ds.html", "paymentConfirmation"),
        ("/recaptcha-puzzle.html", "captcha"),
    ],
)
async def test_a_case_only_a_person_settles_is_taken_to_a_person_once(
    heard: ToolContext, asked: list[BrowserTakeoverRequested], site: Site, path: str, code: str
) -> None:
    tab_id, shot = await snapshot_of(heard, site, path)
    assert shot["takeover"]["code"] == code, shot
    assert "Stop working" in shot["takeover"]["next"]
    assert [(e.tab_id, e.code) for e in asked] == [(tab_id, code)]
    # The agent reads the page again: it is told again, the team is not asked twice.
    again = await call(heard, "snapshot", tabId=tab_id)
    assert again["takeover"]["code"] == code
    assert len(asked) == 1


@pytest.mark.parametrize(
    "path", ["/account-single.html", "/forms.html", "/passkey.html", "/article.html"]
)
async def test_a_page_a_person_need_not_settle_has_no_takeover(
    heard: ToolContext, asked: list[BrowserTakeoverRequested], site: Site, path: str
) -> None:
    # One account is a clear choice; a passkey the page only offers (a conditional request
    # waiting in the background) is no prompt.
    _tab_id, shot = await snapshot_of(heard, site, path)
    assert "takeover" not in shot, shot
    assert asked == []


async def test_a_passkey_prompt_goes_to_a_person_until_the_page_is_left(
    heard: ToolContext, asked: list[BrowserTakeoverRequested], site: Site
) -> None:
    tab_id, shot = await snapshot_of(heard, site, "/passkey.html")
    assert "takeover" not in shot
    tab = heard.engine.get_tab(TEAM, tab_id)
    assert tab.page is not None
    await tab.page.click("#passkey")  # the page asks for a passkey
    shot = await call(heard, "snapshot", tabId=tab_id)
    assert shot["takeover"]["code"] == "passkey", shot
    assert "passkey" in shot["takeover"]["reason"]
    assert [e.code for e in asked] == ["passkey"]
    # The page's own scripts see no binding of ours.
    assert await tab.page.evaluate("typeof window.__crewhostPasskey") == "undefined"
    # A new document has asked for nothing.
    await call(heard, "navigate", tabId=tab_id, url=site.url("/passkey.html"))
    shot = await call(heard, "snapshot", tabId=tab_id)
    assert "takeover" not in shot, shot
