"""Two hub processes on one PostgreSQL: a member on hub B reaches a host linked to hub A."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.databases import ScratchDatabase, scratch_postgres_database
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def shared_url() -> AsyncIterator[str]:
    async with scratch_postgres_database() as url:
        yield url


@pytest.fixture
async def hub_a(tmp_path: Path, shared_url: str) -> AsyncIterator[RunningHub]:
    database = ScratchDatabase(shared_url, None)
    async with running_hub(hub_settings(tmp_path / "a", database), database) as running:
        yield running


@pytest.fixture
async def hub_b_url(tmp_path: Path, shared_url: str, hub_a: RunningHub) -> AsyncIterator[str]:
    """A second hub, as its own ``crewhost hub`` process on the same database."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        "hub",
        "--port",
        "0",
        "--log-format",
        "json",
        "--data-dir",
        str(tmp_path / "b"),
        env={**os.environ, "CREWHOST_DATABASE_URL": shared_url},
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        while True:
            line = json.loads(await asyncio.wait_for(process.stderr.readline(), 30))
            if line["message"] == "hub listening":
                break
        yield str(line["url"])
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def test_a_peer_on_hub_b_reaches_the_host_linked_to_hub_a(
    hub_a: RunningHub, hub_b_url: str, tmp_path: Path
) -> None:
    owner = await hub_a.sign_up_owner()
    team_id = await hub_a.first_team_id(owner)
    await hub_a.invite(owner, team_id, "member@example.com", "member")
    host_id = await wait_linked(hub_a)
    hub_b = RunningHub(hub_b_url, hub_a.hub)
    member = await peer_member(hub_b, "member@example.com", tmp_path)
    try:
        assert member.hub.base_url == hub_b_url
        hosts = await member.hub.hosts(team_id)
        assert [(h["id"], h["online"]) for h in hosts] == [(host_id, True)]
        connection = await member.connect(host_id)
        assert (await connection.call("capabilities"))["hostId"] == host_id

        # A role change made on hub A reaches the host through the bus as well.
        await owner.patch(f"/v1/teams/{team_id}/members/{member.account_id}", {"role": "admin"})
        await asyncio.wait_for(connection.closed.wait(), 1.0)
        again = await member.connect(host_id)
        assert (await again.call("host-v1/whoami"))["role"] == "admin"
        await again.close()
    finally:
        await member.hub.close()
