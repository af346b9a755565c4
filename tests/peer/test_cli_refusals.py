"""``crewhost-peer`` refusing what it cannot use (a config gone bad, a hub address that is
not a hub, an --out it cannot make) with a clear line, and keeping its files private; as a
real process, against the hub's built-in host where it needs one."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from server.host.browser.partitions import Partition
from tests.peer.test_chat_cli import database  # noqa: F401 - fixture
from tests.peer.test_cli import login, peer_cli
from tests.peer.test_watch_cli import signed_in
from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked


@pytest.fixture
async def not_a_hub() -> AsyncIterator[str]:
    """A web server that answers every request with an HTML page saying 404."""

    async def page(_: web.Request) -> web.Response:
        return web.Response(status=404, text="<html>Not Found</html>", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{anything:.*}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def test_an_address_that_is_not_a_hub_is_named(not_a_hub: str, tmp_path: Path) -> None:
    hub = f"{not_a_hub}/oops"
    code, out, err = await peer_cli(
        tmp_path,
        "login",
        "--hub",
        hub,
        "--email",
        "a@example.com",
        "--password-stdin",
        stdin=b"password\n",
    )

    assert (code, out) == (1, "")
    assert err == (
        f"crewhost-peer: {hub} did not answer as a Crewhost hub (HTTP 404, not JSON): check "
        "the address given to `crewhost-peer login --hub` (notAHub)\n"
    )
    assert not (tmp_path / "config.json").exists()


@pytest.mark.parametrize(
    ("written", "problem"),
    [
        ("{not json", "Expecting property name enclosed in double quotes: line 1 column 2"),
        ('{"hub": "http://127.0.0.1:1"}', "not an object with hub, token, account_id"),
    ],
)
async def test_a_config_gone_bad_says_to_sign_in_again(
    tmp_path: Path, written: str, problem: str
) -> None:
    config = tmp_path / "config.json"
    config.write_text(written)

    code, out, err = await peer_cli(tmp_path, "teams")

    assert (code, out) == (2, "")
    assert err.startswith(f"crewhost-peer: the config at {config} is unreadable ({problem}")
    assert err.endswith("): run `crewhost-peer login --hub URL --email EMAIL` again\n")


async def test_an_out_folder_that_cannot_be_made_is_a_usage_error(
    server: RunningHub, tmp_path: Path
) -> None:
    team_id = await signed_in(server, tmp_path / "peer")
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(team_id, Partition.shared())
    taken = tmp_path / "frames"
    taken.write_text("a file, not a folder")

    code, out, err = await peer_cli(tmp_path / "peer", "watch", tab.id, "--out", str(taken))

    assert (code, out) == (2, "")
    assert err == f"crewhost-peer: --out {taken}: cannot make that folder (File exists)\n"
    inside = taken / "inside"
    code, out, err = await peer_cli(tmp_path / "peer", "watch", tab.id, "--out", str(inside))
    assert (code, out) == (2, "")
    assert err == f"crewhost-peer: --out {inside}: cannot make that folder (Not a directory)\n"
    assert taken.read_text() == "a file, not a folder"


async def test_the_token_is_kept_private_in_a_config_made_readable_before(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    config = tmp_path / "config.json"
    config.write_text("{}")
    config.chmod(0o644)

    code, _, err = await login(tmp_path, server)

    assert code == 0, err
    assert config.stat().st_mode & 0o777 == 0o600
    assert json.loads(config.read_text())["token"]


async def test_known_host_keys_are_kept_private(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    code, _, err = await login(tmp_path, server)
    assert code == 0, err
    host_id = await wait_linked(server)
    known_hosts = tmp_path / "known_hosts.json"
    # A temporary file an earlier write left behind, readable by all.
    left = known_hosts.with_suffix(".tmp")
    left.write_text("")
    left.chmod(0o644)

    code, out, err = await peer_cli(tmp_path, "connect")

    assert code == 0, err
    assert f"connected to {host_id}" in out
    assert known_hosts.stat().st_mode & 0o777 == 0o600
    assert host_id in next(iter(json.loads(known_hosts.read_text()).values()))
    assert not left.exists()
