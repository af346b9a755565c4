"""The host link: it returns after a hub restart with peers kept up; removing a host ends all."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

from aiohttp import web

from server.config import Settings
from server.hub.app import build_app
from server.hub.container import Hub
from server.serve import builtin_host
from tests.support import commands
from tests.support.commands import CREWHOST, DEVNULL, PIPE
from tests.support.databases import ScratchDatabase
from tests.support.enrolled_hosts import linked_host
from tests.support.hub_server import RunningHub, hub_settings
from tests.support.peers import peer_member, wait_linked


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def start_hub(
    port: int, settings: Settings, database: ScratchDatabase
) -> tuple[Hub, web.AppRunner]:
    hub = Hub.build(settings, db=database.open())
    runner = web.AppRunner(build_app(hub))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, reuse_address=True).start()
    return hub, runner


async def test_the_link_returns_after_a_hub_restart_and_peers_stay(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    settings = hub_settings(tmp_path, database)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first_hub, first_runner = await start_hub(port, settings, database)
    running = RunningHub(url, first_hub)
    await running.sign_up_owner()
    try:
        async with builtin_host(settings, first_hub, url) as host:
            running.host = host
            host_id = await wait_linked(running)
            member = await peer_member(running, "owner@example.com", tmp_path)
            kept = await member.connect(host_id)
            await member.hub.close()
            await running.close_clients()

            await first_runner.cleanup()
            await asyncio.wait_for(host.link.unlinked.wait(), 10)
            # The hub is gone; the peer-to-peer connection is not.
            assert (await kept.call("capabilities"))["hostId"] == host_id

            second_hub, second_runner = await start_hub(port, settings, database)
            try:
                await asyncio.wait_for(host.link.linked.wait(), 20)
                again = RunningHub(url, second_hub, host)
                member = await peer_member(again, "owner@example.com", tmp_path)
                fresh = await member.connect(host_id)
                assert (await fresh.call("capabilities"))["hostId"] == host_id
                assert (await kept.call("host-v1/whoami"))["role"] == "owner"
                await fresh.close()
                await kept.close()
                await member.hub.close()
            finally:
                await second_runner.cleanup()
    finally:
        # The built-in host works on its hub's database: this one outlived the first hub,
        # whose end closed it, and the host's queries since opened connections anew.
        await first_hub.db.close()


async def test_removing_a_host_ends_its_peers_and_link(server: RunningHub, tmp_path: Path) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    async with linked_host(server, owner, team_id, tmp_path) as lab:
        services = lab.services
        member = await peer_member(server, "owner@example.com", tmp_path)
        connection = await member.connect(services.host_id)
        reply = await owner.delete(f"/v1/teams/{team_id}/hosts/{services.host_id}")
        assert reply.status == 204
        await asyncio.wait_for(connection.closed.wait(), 1.0)
        await asyncio.wait_for(lab.link.unlinked.wait(), 10)
        hosts = (await owner.get(f"/v1/teams/{team_id}/hosts")).body["hosts"]
        assert services.host_id not in [h["id"] for h in hosts]
        await member.hub.close()


async def test_crewhost_host_enrols_links_and_serves_peers(
    server: RunningHub, tmp_path: Path
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    enrolment = await owner.post(f"/v1/teams/{team_id}/hosts/enrolments", {"name": "Lab"})
    assert enrolment.body["command"].startswith(f"crewhost host --hub {server.url} --enrol ")
    process = await commands.start(
        CREWHOST,
        "host",
        "--hub",
        server.url,
        "--enrol",
        enrolment.body["code"],
        "--data-dir",
        str(tmp_path / "lab"),
        "--log-format",
        "json",
        env=dict(os.environ),
        stdout=DEVNULL,
        stderr=PIPE,
    )
    assert process.stderr is not None
    try:
        while True:
            line = json.loads(await asyncio.wait_for(process.stderr.readline(), 30))
            if line["message"] == "linked to hub":
                break
        host_id = line["host_id"]
        key_file = tmp_path / "lab" / "host" / "identity.key"
        assert key_file.stat().st_mode & 0o777 == 0o600
        member = await peer_member(server, "owner@example.com", tmp_path)
        connection = await member.connect(host_id)
        assert (await connection.call("capabilities"))["hostId"] == host_id
        await connection.close()
        await member.hub.close()
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)
    assert process.returncode == 0
