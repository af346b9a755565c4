"""Connections and views that come and go leave nothing behind on the host, and a peer
whose process is killed is forgotten within the ICE consent timeout.

The long run (1,000 connections, 200 views) is ``bench/soak.py``; these are its bounded
share, on SQLite only (the cycles are about the peer manager, not storage).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aioice.ice
import pytest

from peer.live_view import open_view
from server.host.browser.partitions import Partition
from server.host.container import HostServices
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.hub_server import PASSWORD, RunningHub
from tests.support.peer_process import READY
from tests.support.peers import owner_peer, peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

CYCLES = 30
VIEW_CYCLES = 10
FD_TOLERANCE = 8
# Used ticket nonces are kept until their ticket would expire (60 s): bounded, not a leak.
BOUNDED_BY_EXPIRY = {"ticket_nonces"}


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


def tables(services: HostServices) -> dict[str, int]:
    sizes = {**services.peers.table_sizes(), **services.live.table_sizes()}
    return {name: size for name, size in sizes.items() if name not in BOUNDED_BY_EXPIRY}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_connections_that_come_and_go_leave_no_state_behind(
    server: RunningHub, tmp_path: Path
) -> None:
    host_id, member = await owner_peer(server, tmp_path)
    services = server.builtin.services

    async def cycle() -> None:
        connection = await member.connect(host_id)
        assert (await connection.call("capabilities"))["capabilities"]
        await connection.close()

    await cycle()  # the first connection makes what every later one reuses
    await eventually(lambda: services.peers.table_sizes()["peers"] == 0)
    before, fds_before = tables(services), open_fds()
    for _ in range(CYCLES):
        await cycle()
    await eventually(lambda: tables(services) == before)
    await eventually(lambda: open_fds() <= fds_before + FD_TOLERANCE)
    assert services.peers.table_sizes()["ticket_nonces"] <= CYCLES + 1
    await member.hub.close()


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with serving(pages_app({"/": "<!doctype html><p>watched</p>"})) as running:
        yield running


async def test_views_that_open_and_close_leave_no_state_behind(
    server: RunningHub, site: Site, tmp_path: Path
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    services = server.builtin.services
    engine = await services.browser.engine()
    tab = await engine.open_tab(team_id, Partition.shared(), url=site.url("/"))
    member = await peer_member(server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)
    before = tables(services)
    for _ in range(VIEW_CYCLES):
        view = await open_view(connection, tab.id)
        await view.next_frame()
        view.close()
        await eventually(lambda: services.live.table_sizes()["views"] == 0)
    await eventually(lambda: tables(services) == before)
    assert tab.viewers == 0
    await connection.close()
    await member.hub.close()


async def test_a_killed_peer_is_forgotten_within_the_consent_timeout(
    server: RunningHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # aioice checks consent every 5 s (+-20%) and gives up after 6 misses (RFC 7675's
    # 30 s); its module constants are the only way to shorten them, here to 0.2 s x 3.
    monkeypatch.setattr(aioice.ice, "CONSENT_INTERVAL", 0.2)
    monkeypatch.setattr(aioice.ice, "CONSENT_FAILURES", 3)
    await server.sign_up_owner()
    host_id = await wait_linked(server)
    services = server.builtin.services
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.peer_process",
        server.url,
        "owner@example.com",
        PASSWORD,
        host_id,
        str(tmp_path),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert line.decode().strip() == READY
        assert services.peers.table_sizes()["peers"] == 1
        process.send_signal(signal.SIGKILL)
        await process.wait()
        # 3 misses of 0.2 s (at most 0.24 s each, plus aioice's 0.5 s answer wait): a few
        # seconds at the most; the bound only keeps a broken build from hanging.
        await eventually(lambda: services.peers.table_sizes()["peers"] == 0, seconds=20)
        assert services.peers.table_sizes()["team_api_sessions"] == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
