"""DNS rebinding against the full browser: a name whose answers change between questions
never reaches a loopback service, because every connection goes through the filtering
proxy, which dials the address it judged (the PAC script's own lookup is a second check,
not the one the connection uses).

The name is answered by a DNS server the test runs (``tests.support.dns_server``); the
browser asks it for its own lookups and the filtering proxy takes the next answer of the
same script. The allowed "public" site is 127.0.0.2 (allowed here), the service that must
stay unread listens on 127.0.0.1, both on one port, so one URL reaches either.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from aiohttp import web

from server.common.browser_address_policy import AddressPolicy, AddressRefused
from server.host.browser import address_guard
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from tests.support.chromium import full_browser
from tests.support.dns_server import ScriptedNames, chromium_asking, dns_server
from tests.support.sites import Handler, Site, pages_app, serving

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEAM = "team-a"
AGENT = Caller.agent("agent-1", "thread-1")
PUBLIC = "127.0.0.2"
LOOPBACK = "127.0.0.1"
NAVIGATIONS = 24


@dataclass
class Rebinding:
    engine: BrowserEngine
    names: ScriptedNames
    secret: Site
    public: Site

    def url(self, name: str, path: str) -> str:
        return f"http://{name}:{self.secret.port}{path}"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def rebinding(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Rebinding]:
    chromium = full_browser()
    folder = tmp_path_factory.mktemp("rebinding")
    names = ScriptedNames()
    secret_app = pages_app({}, routes={"/page": _closing_page("secret")})
    public_app = pages_app({}, routes={"/page": _closing_page("public")})
    async with (
        dns_server(names) as dns_address,
        serving(secret_app, LOOPBACK) as secret,
        serving(public_app, PUBLIC, secret.port) as public,
    ):
        monkeypatch = pytest.MonkeyPatch()
        # The filtering proxy's lookups take the same script's next answers.
        monkeypatch.setattr(address_guard, "system_resolve", names)
        engine = BrowserEngine(
            folder / "data",
            chromium=str(chromium_asking(dns_address, chromium, folder)),
            address_policy=AddressPolicy.from_entries([PUBLIC]),
        )
        try:
            async with engine:
                yield Rebinding(engine, names, secret, public)
        finally:
            monkeypatch.undo()


def _closing_page(title: str) -> Handler:
    """A page whose connection closes after it, as a rebinding site's does: the next load
    looks the name up again instead of reusing the connection."""

    async def page(_request: web.Request) -> web.Response:
        response = web.Response(text=f"<title>{title}</title>", content_type="text/html")
        response.force_close()
        return response

    return page


async def _outcome(rebinding: Rebinding, name: str) -> str:
    """One navigation in a fresh tab: the page's title, or the rule that refused it."""
    engine = rebinding.engine
    tab = await engine.open_tab(TEAM, Partition.shared(), owner_agent_id=AGENT.agent_id)
    try:
        await engine.navigate(TEAM, tab.id, AGENT, rebinding.url(name, "/page"))
    except AddressRefused as refused:
        return f"refused: {refused.rule}"
    finally:
        title = await engine.run(TEAM, tab.id, AGENT, lambda page: page.title())
        await engine.close_tab(TEAM, tab.id, AGENT)
    return str(title.value)


async def test_a_name_that_answers_public_then_loopback_is_refused(
    rebinding: Rebinding,
) -> None:
    # The browser's own lookup (the PAC script's) gets the public answer first; every
    # later question gets loopback. Before the filtering proxy, the connection's own lookup
    # got loopback and the page was the secret's.
    name = "public-then-loopback.test"
    rebinding.names.script(name, [PUBLIC, LOOPBACK])
    assert await _outcome(rebinding, name) == "refused: loopback"
    assert rebinding.names.answered[0] == (name, PUBLIC)
    assert rebinding.secret.requests == []


async def test_a_name_alternating_public_and_loopback_never_reaches_loopback(
    rebinding: Rebinding,
) -> None:
    # A name of its own for each navigation, as a rebinding site has (Chromium keeps a
    # looked-up name for a minute); the zone's answers alternate question by question.
    zone = "alternating.test"
    rebinding.names.script(zone, [PUBLIC])
    assert await _outcome(rebinding, f"first.{zone}") == "public"  # public alone loads

    rebinding.names.script(zone, [PUBLIC, LOOPBACK], cycle=True)
    outcomes = [await _outcome(rebinding, f"n{i}.{zone}") for i in range(NAVIGATIONS)]
    assert set(outcomes) <= {"public", "refused: loopback"}, outcomes
    assert {a for n, a in rebinding.names.answered if n.endswith(zone)} == {PUBLIC, LOOPBACK}
    assert rebinding.secret.requests == []
