"""Two hub processes on one PostgreSQL: a member on hub B reaches a host linked to hub A."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.keys import SigningKey
from server.host.start import build_host, run_link
from tests.support import commands
from tests.support.commands import CREWHOST, DEVNULL, PIPE
from tests.support.databases import ScratchDatabase, scratch_postgres_database
from tests.support.enrolled_hosts import enrol_host
from tests.support.hub_server import ApiClient, RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked
from tests.support.switching_relay import switching_relay
from tests.support.waiting import eventually


def port_of(hub: RunningHub) -> int:
    return int(hub.url.rsplit(":", 1)[1])


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
    process = await commands.start(
        CREWHOST,
        "hub",
        "--port",
        "0",
        "--log-format",
        "json",
        "--data-dir",
        str(tmp_path / "b"),
        env={**os.environ, "CREWHOST_DATABASE_URL": shared_url},
        stdout=DEVNULL,
        stderr=PIPE,
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


async def test_a_host_that_relinks_through_another_hub_stays_online(
    tmp_path: Path, shared_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The host's path to hub B dies without a word; the host relinks through hub A; B
    learns of its dead link only afterwards (as its heartbeat gives up), and must leave the
    link A holds listed online."""
    caplog.set_level(logging.INFO, logger="server.hub.links")
    database = ScratchDatabase(shared_url, None)
    async with (
        running_hub(hub_settings(tmp_path / "a", database), database, with_host=False) as hub_a,
        running_hub(hub_settings(tmp_path / "b", database), database, with_host=False) as hub_b,
    ):
        owner = await hub_a.sign_up_owner()
        team_id = await hub_a.first_team_id(owner)
        on_b = await hub_b.sign_in("owner@example.com")
        key = SigningKey.generate()
        host_id = await enrol_host(hub_a, owner, team_id, key)
        services = build_host(
            hub_a.hub.settings.model_copy(update={"data_dir": tmp_path / "host"}),
            key,
            hub_a.hub.db,
            secrets=SecretBox(KeyRing.generate()),
        )
        services.host_id = host_id

        async def listed_online(client: ApiClient) -> bool:
            hosts = (await client.get(f"/v1/teams/{team_id}/hosts")).body["hosts"]
            return bool(next(h["online"] for h in hosts if h["id"] == host_id))

        async with (
            switching_relay(port_of(hub_b)) as relay,
            run_link(services, f"http://127.0.0.1:{relay.port}") as host,
        ):
            await asyncio.wait_for(host.link.linked.wait(), 10)
            assert hub_b.hub.links.is_linked_here(host_id)

            # The path to B dies: the host hears it at once and relinks, now through A.
            relay.target = port_of(hub_a)
            await relay.cut_client_sides()
            await asyncio.wait_for(host.link.unlinked.wait(), 10)
            await asyncio.wait_for(host.link.linked.wait(), 10)
            assert hub_a.hub.links.is_linked_here(host_id)
            assert hub_b.hub.links.is_linked_here(host_id)  # B has heard nothing yet
            # B renews what it believes it holds: the link is A's now, and stays as A wrote it.
            await hub_b.hub.links.renew()
            # A member on B reaches the host through A, not down B's dead link.
            member = await peer_member(hub_b, "owner@example.com", tmp_path / "member")
            try:
                connection = await member.connect(host_id)
                assert (await connection.call("capabilities"))["hostId"] == host_id
                await connection.close()
            finally:
                await member.hub.close()

            # Only now does B's side of the dead path end.
            relay.close_silent()
            await eventually(
                lambda: any(r.getMessage() == "host link ended" for r in caplog.records)
            )
            assert not hub_b.hub.links.is_linked_here(host_id)
            assert await listed_online(owner)
            assert await listed_online(on_b)
            # A's renewals keep it listed.
            await hub_a.hub.links.renew()
            assert await listed_online(on_b)
