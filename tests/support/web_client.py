"""Driving the web client against a real ``crewhost serve``: the server's start and stop,
the hub's API for set-up, people connected with the Python peer library, and the fixture
pages the walks use. The e2e suite's fixtures (``tests/e2e/conftest.py``) are built on it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    ViewportSize,
    expect,
)

from peer.connection import HostConnection, connect_to_host
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts
from server.hub.http.routing import CSRF_HEADER
from server.hub.http.web_client import WEB_DIST
from tests.support.commands import Background
from tests.support.fakes.mcp_servers import SANDBOX_PATHS
from tests.support.hub_server import FAST_HASHING, PASSWORD, ApiClient
from tests.support.sites import SITE_HOST

log = logging.getLogger(__name__)


ROOT = Path(__file__).resolve().parents[2]


WEB = ROOT / "web"


OUTPUT = ROOT / "test-output" / "e2e"


DESKTOP: ViewportSize = {"width": 1280, "height": 800}


PHONE: ViewportSize = {"width": 390, "height": 844}


START_SECONDS = 60.0


STOP_SECONDS = 20.0


SETUP_LINK = re.compile(r"(http://\S+)/app/setup#code=([A-Za-z0-9_-]+)")


LINKED = re.compile(r'"message": "linked to hub", "host_id": "([0-9a-f]+)"')


# The whole suite on three workers of a two-core machine can take seconds to show a
# change: an assertion that will pass waits for it, one that will not fails the same.
EXPECT_MS = 15_000


expect.set_options(timeout=EXPECT_MS)


# The same cheap password hashing as the in-process hub of the other tests.
FAST_HASHING_ENV = {
    "CREWHOST_" + key.replace(".", "_").upper(): str(value) for key, value in FAST_HASHING.items()
}


# A button over a fixed share of the viewport, so a click at a fraction of the frame lands on
# it whatever size the live view gives the page; pressing it turns the background magenta.
PRESSED_RGB = (230, 0, 120)


# The button turns the page pink and tells the site (``/pressed``), so a test can say
# whether a press that the live view never showed reached the page.
PRESS_PAGE = """<!doctype html>
<title>Press</title>
<style>
  html, body { margin: 0; height: 100%; background: #fff; font: 28px sans-serif }
  body.pressed { background: rgb(230, 0, 120) }
  #b { position: fixed; left: 10vw; top: 10vh; width: 40vw; height: 30vh; font-size: 28px }
</style>
<button id="b"
  onclick="this.textContent='Pressed'; document.body.className='pressed'; fetch('/pressed')">
  Press</button>
"""


# A text area over a fixed share of the viewport; the page turns green once it holds the
# pasted phrase, so a paste shows in the live view's frames.
PASTED_PHRASE = "pasted from the laptop"


PASTED_RGB = (0, 160, 70)


TYPE_PAGE = f"""<!doctype html>
<title>Type</title>
<style>
  html, body {{ margin: 0; height: 100%; background: #fff }}
  body.pasted {{ background: rgb(0, 160, 70) }}
  #t {{ position: fixed; left: 10vw; top: 10vh; width: 60vw; height: 30vh; font-size: 24px }}
</style>
<textarea id="t"></textarea>
<script>
  const area = document.getElementById('t');
  area.addEventListener('input', () => {{
    document.body.className = area.value === '{PASTED_PHRASE}' ? 'pasted' : '';
  }});
</script>
"""


# A page that names its icon: the tab list shows it beside the title.
ICON_PAGE = "<!doctype html><title>Inbox</title><link rel=icon href='/icon.svg'><p>mail</p>"


ICON_SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>"
    "<rect width='16' height='16' rx='3' fill='#e6007a'/></svg>"
)


PAGES = {"/press": PRESS_PAGE, "/type": TYPE_PAGE, "/inbox": ICON_PAGE}


@dataclass
class Crewhost:
    """A running ``crewhost serve``: its address, setup code and built-in host."""

    url: str
    setup_code: str
    host_id: str
    log_file: Path
    # The account made with the setup code, once there is one.
    first_owner: str | None = None

    @property
    def setup_link(self) -> str:
        return f"{self.url}/app/setup#code={self.setup_code}"

    def at(self, path: str) -> str:
        return self.url + path


def ensure_web_build() -> None:
    """The hub serves the web client's build; build it once when it is missing."""
    if (WEB_DIST / "index.html").is_file():
        return
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed to build the web client (its build is missing)"
    subprocess.run([npm, "run", "build"], cwd=WEB, check=True)  # noqa: S603


def server_env() -> dict[str, str]:
    # Nothing of the developer's own Crewhost set-up, except where Chromium is.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CREWHOST_") or k == "CREWHOST_CHROMIUM"
    }
    env.update(FAST_HASHING_ENV)
    # The fixture site is on loopback, which the host's browsers are refused by default.
    env["CREWHOST_HOST_BROWSER_ALLOWED_HOSTS"] = SITE_HOST
    # The upstream proxies the tests start listen there too: on-premises proxies, allowed.
    env["CREWHOST_HOST_PROXY_ALLOWED_HOSTS"] = f"{SITE_HOST},localhost"
    # And the model providers' fakes: a local model server, allowed.
    env["CREWHOST_HOST_PROVIDER_ALLOWED_HOSTS"] = SITE_HOST
    # A memory review asks the agent's provider 30 s after its turns end: in a module whose
    # tests share one agent and one scripted fake, it would take the reply a later test
    # scripted for its turn (as the in-process hub's tests, none asks for one).
    env["CREWHOST_HOST_MEMORY_REVIEW_SECONDS"] = "3600"
    # The fake MCP servers run as stdio commands of the tests' teams, in the sandbox,
    # which shows them the repository and its Python.
    env["CREWHOST_HOST_MCP_STDIO_TEAMS"] = "*"
    env["CREWHOST_HOST_MCP_STDIO_PATHS"] = ",".join(SANDBOX_PATHS)
    return env


def wait_for_line(
    path: Path, pattern: re.Pattern[str], process: Background, log_file: Path
) -> re.Match[str]:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = pattern.search(path.read_text(errors="replace"))
        if found:
            return found
        if process.poll() is not None:
            raise RuntimeError(
                f"crewhost serve exited with {process.returncode} before printing "
                f"{pattern.pattern!r}; its log: {log_file}"
            )
        # A fixture outside any event loop: nothing else waits on this thread.
        time.sleep(0.05)
    raise TimeoutError(f"crewhost serve printed no {pattern.pattern!r}; its log: {log_file}")


def stop_server(process: Background) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_SECONDS)
            return
        except subprocess.TimeoutExpired:
            pass
    # The server did not stop: end it and the Chromium it started (its own process group).
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


async def save_failed_pages(browser: Browser, test: pytest.Item) -> None:
    """Screenshots of every page of ``browser``, under test-output/e2e/failures/."""
    folder = OUTPUT / "failures"
    folder.mkdir(parents=True, exist_ok=True)
    name = test.name
    pages = [page for context in browser.contexts for page in context.pages]
    for number, page in enumerate(pages, 1):
        path = folder / f"{name}-{number}.png"
        with contextlib.suppress(Exception):
            await page.screenshot(path=path, full_page=True)
            log.warning("page %s of the failed test (%s) saved to %s", number, page.url, path)


@dataclass
class Screens:
    """Saves what a page shows at 1280x800 and 390x844 under test-output/e2e/.

    A screen wider than the viewport (one that scrolls sideways) is noted, and the test
    errors at teardown, once its flow has run.
    """

    overflowing: list[str] = field(default_factory=list)

    async def save(
        self, page: Page, screen: str, settle: Callable[[Page], Awaitable[None]] | None = None
    ) -> None:
        """Screenshots at each size; ``settle`` waits for the page to follow a new size."""
        OUTPUT.mkdir(parents=True, exist_ok=True)
        before = page.viewport_size
        for size in (DESKTOP, PHONE):
            await page.set_viewport_size(size)
            if settle is not None:
                await settle(page)
            path = OUTPUT / f"{screen}-{size['width']}x{size['height']}.png"
            await page.screenshot(path=path, full_page=True)
            wide = await page.evaluate("document.documentElement.scrollWidth")
            if wide > size["width"]:
                self.overflowing.append(f"{path.name} is {wide} px wide")
        if before is not None:
            await page.set_viewport_size(before)
            if settle is not None:
                await settle(page)


@dataclass
class Team:
    """A team on the hub, its owner signed in over the API, and helpers to add people."""

    id: str
    name: str
    owner_email: str
    owner: ApiClient
    crewhost: Crewhost
    api: HubApi

    async def add_member(self, email: str, name: str, role: str = "member") -> None:
        """An invitation from the owner, accepted by a new account (left signed out)."""
        created = await self.owner.post(f"/v1/teams/{self.id}/invitations", {"role": role})
        assert created.status == 201, created.body
        person = self.api.client()
        joined = await person.post(
            "/v1/accounts",
            {
                "email": email,
                "name": name,
                "password": PASSWORD,
                "invitationCode": created.body["code"],
            },
        )
        assert joined.status == 201, joined.body
        signed_out = await person.delete("/v1/sessions/current")
        assert signed_out.status == 204, signed_out.body


class HubApi:
    """Plain HTTP clients of the hub, for the set-up a test is not about."""

    FIRST_OWNER = "first-owner@example.com"

    def __init__(self, crewhost: Crewhost) -> None:
        self.crewhost = crewhost
        self._sessions: list[aiohttp.ClientSession] = []

    def client(self) -> ApiClient:
        session = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self._sessions.append(session)
        return ApiClient(self.crewhost.url, session)

    async def sign_in(self, email: str) -> ApiClient:
        client = self.client()
        reply = await client.post("/v1/sessions", {"email": email, "password": PASSWORD})
        assert reply.status == 201, reply.body
        return client

    async def first_owner(self) -> str:
        """The account made with the setup code; made here when no test has made it yet."""
        if self.crewhost.first_owner is None:
            reply = await self.client().post(
                "/v1/accounts",
                {
                    "email": self.FIRST_OWNER,
                    "name": "First Owner",
                    "password": PASSWORD,
                    "setupCode": self.crewhost.setup_code,
                    "teamName": "First team",
                },
            )
            assert reply.status == 201, reply.body
            self.crewhost.first_owner = self.FIRST_OWNER
        return self.crewhost.first_owner

    async def new_team(self, name: str) -> Team:
        """A new team owned by the first owner."""
        email = await self.first_owner()
        owner = await self.sign_in(email)
        created = await owner.post("/v1/teams", {"name": name})
        assert created.status == 201, created.body
        return Team(created.body["id"], name, email, owner, self.crewhost, self)

    async def close(self) -> None:
        for session in self._sessions:
            await session.close()


async def sign_in_context(context: BrowserContext, crewhost: Crewhost, email: str) -> None:
    """Give a browser context a session cookie, as the sign-in screen would."""
    reply = await context.request.post(
        crewhost.at("/v1/sessions"),
        data={"email": email, "password": PASSWORD, "client": "browser"},
        headers={CSRF_HEADER: "1", "Origin": crewhost.url},
    )
    assert reply.status == 201, await reply.text()


def owner_peer(team: Team, folder: Path) -> contextlib.AbstractAsyncContextManager[HostConnection]:
    """The owner's agent side: the Python peer library connected to the built-in host."""
    return person_peer(team, folder, team.owner_email)


@contextlib.asynccontextmanager
async def person_peer(team: Team, folder: Path, email: str) -> AsyncIterator[HostConnection]:
    """A person of the team (signed in with the suite's password) connected to the
    built-in host with the Python peer library."""
    async with HubClient(team.crewhost.url) as hub:
        account = await hub.sign_in(email, PASSWORD)
        connection = await connect_to_host(
            hub,
            team.id,
            team.crewhost.host_id,
            KnownHosts(folder / "known-hosts.json"),
            account["id"],
        )
        try:
            yield connection
        finally:
            await connection.close()


# A tab made for the test starts the host's Chromium (the full browser) on first use: on a
# machine the rest of the suite keeps busy that alone can outlast a call's default wait.
NEW_TAB_SECONDS = 60.0


async def until(check: Callable[[], Awaitable[bool]], seconds: float = 15.0) -> None:
    """Return once ``check()`` holds (state behind an API, with no event to wait for)."""
    async with asyncio.timeout(seconds):
        while not await check():  # noqa: ASYNC110 - the peer library has no event for it
            await asyncio.sleep(0.1)


def tab_address(url: str) -> str:
    """An address as a tab list may show it: without the scheme."""
    return url.split("://", 1)[1]


# Whether the test itself failed (set by the e2e suite's report hook), for the fixtures' teardown.
FAILED = pytest.StashKey[bool]()
