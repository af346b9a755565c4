"""``crewhost-peer watch``: a real process watching a tab of the built-in host."""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from server.host.browser.partitions import Partition
from tests.peer.test_cli import login, peer_cli
from tests.support import commands
from tests.support.commands import PEER, PIPE
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.hub_server import PASSWORD, RunningHub
from tests.support.peers import wait_linked
from tests.support.waiting import eventually

# A page that changes every 16 ms, so that the screencast keeps sending frames.
ANIMATED = (
    "<!doctype html><style>body{margin:0}</style>"
    "<div id=box style='width:100vw;height:100vh'></div><script>let n=0;"
    "setInterval(()=>{document.getElementById('box').style.background="
    "'hsl('+(n++%360)+',70%,50%)'},16)</script>"
)

FIGURES = r"frames received: (\d+)\nfps: (\d+\.\d)\nbytes per frame: (\d+)\n"
STILL_PAGE_NOTE = (
    "note: a page sends frames only when it changes, so a still page sends few or none; "
    "that is not a fault\n"
)


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """Live view is about the browser, not storage: SQLite only."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


@pytest.fixture
async def animated_url() -> AsyncIterator[str]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=ANIMATED, content_type="text/html")

    app = web.Application()
    app.router.add_get("/animated", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}/animated"
    await runner.cleanup()


async def signed_in(server: RunningHub, home: Path) -> str:
    """Sign the owner up and in through the CLI; the team's id."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    code, _, err = await login(home, server)
    assert code == 0, err
    await wait_linked(server)
    return team_id


async def test_watch_saves_frames_and_prints_rates(
    server: RunningHub, animated_url: str, tmp_path: Path
) -> None:
    team_id = await signed_in(server, tmp_path / "peer")
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(team_id, Partition.shared(), url=animated_url)
    out = tmp_path / "frames"

    code, stdout, err = await peer_cli(
        tmp_path / "peer", "watch", tab.id, "--out", str(out), "--seconds", "2"
    )

    assert code == 0, err
    match = re.fullmatch(FIGURES, stdout)
    assert match is not None, stdout
    assert err == STILL_PAGE_NOTE
    count, fps, average = int(match[1]), float(match[2]), int(match[3])
    saved = sorted(out.glob("frame-*.jpg"))
    assert count >= 2
    assert len(saved) == count
    assert fps == pytest.approx(count / 2, abs=0.05)
    for path in saved:
        assert re.fullmatch(r"frame-\d+\.jpg", path.name)
        data = path.read_bytes()
        assert data[:3] == b"\xff\xd8\xff"  # a JPEG's start of image
        assert data[-2:] == b"\xff\xd9"  # and its end
    sizes = [path.stat().st_size for path in saved]
    assert average == round(sum(sizes) / len(sizes))

    # A page that does not change sends few frames or none, and that is no failure.
    still = await engine.open_tab(team_id, Partition.shared())
    code, stdout, err = await peer_cli(tmp_path / "peer", "watch", still.id, "--seconds", "1")
    assert code == 0, err
    assert re.fullmatch(FIGURES, stdout), stdout
    assert err == STILL_PAGE_NOTE


async def test_watch_of_an_unknown_tab_is_refused(server: RunningHub, tmp_path: Path) -> None:
    await signed_in(server, tmp_path)

    code, stdout, err = await peer_cli(tmp_path, "watch", str(uuid.uuid4()), "--seconds", "1")

    assert code == 1
    assert stdout == ""
    assert err.startswith("crewhost-peer: ")
    assert err.endswith("(tabNotFound)\n")


@pytest.mark.parametrize(
    ("how", "code"), [("removed", "removedFromTeam"), ("signed_out", "sessionEnded")]
)
async def test_watch_ends_at_once_when_the_member_goes(
    server: RunningHub, animated_url: str, tmp_path: Path, how: str, code: str
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    member = await server.invite(owner, team_id, "member@example.com", "member")
    await wait_linked(server)
    home = tmp_path / "peer"
    status, _, err = await peer_cli(
        home,
        "login",
        "--hub",
        server.url,
        "--email",
        "member@example.com",
        "--password-stdin",
        stdin=PASSWORD.encode() + b"\n",
    )
    assert status == 0, err
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(team_id, Partition.shared(), url=animated_url)
    # Far longer than the test may take: it must end because the member went, not on time.
    watching = await commands.start(
        PEER,
        "watch",
        tab.id,
        "--seconds",
        "3600",
        stdout=PIPE,
        stderr=PIPE,
        env={**os.environ, "CREWHOST_PEER_HOME": str(home)},
    )
    try:
        await eventually(lambda: bool(server.builtin.services.live.sessions(team_id, tab.id)))
        if how == "removed":
            gone = await owner.delete(f"/v1/teams/{team_id}/members/{member.account_id}")
        else:  # the member signs every other session out, the watching one with them
            gone = await member.post("/v1/me/sessions/revoke-others")
        assert gone.status in (200, 204), gone.body
        stdout, stderr = await asyncio.wait_for(watching.communicate(), 60)
    finally:
        if watching.returncode is None:
            watching.kill()
            await watching.wait()
    assert watching.returncode == 1
    assert stdout == b""
    assert stderr.startswith(b"crewhost-peer: ")
    assert stderr.endswith(f"({code})\n".encode()), stderr
