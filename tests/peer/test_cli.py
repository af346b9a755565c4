"""``crewhost-peer`` as a real process against a real hub and its built-in host."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.support.hub_server import PASSWORD, RunningHub

ROOT = Path(__file__).resolve().parents[2]


async def peer_cli(home: Path, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "peer.cli",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "CREWHOST_PEER_HOME": str(home)},
    )
    out, err = await process.communicate(stdin)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def login(home: Path, server: RunningHub, password: str = PASSWORD) -> tuple[int, str, str]:
    """``crewhost-peer login`` as the owner, the password on stdin."""
    return await peer_cli(
        home,
        "login",
        "--hub",
        server.url,
        "--email",
        "owner@example.com",
        "--password-stdin",
        stdin=password.encode() + b"\n",
    )


async def test_login_list_connect_and_call(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner(team="Ops")
    host_id = server.builtin.services.host_id
    code, out, _ = await login(tmp_path, server)
    assert (code, out) == (0, "signed in as owner@example.com\n")
    config = tmp_path / "config.json"
    assert config.stat().st_mode & 0o777 == 0o600
    assert PASSWORD not in config.read_text()

    code, out, _ = await peer_cli(tmp_path, "teams")
    assert code == 0
    assert out.strip().endswith("owner   Ops")
    code, out, _ = await peer_cli(tmp_path, "hosts")
    assert out.split()[:2] == [host_id, "online"]

    code, out, _ = await peer_cli(tmp_path, "connect")
    assert code == 0
    assert f"connected to {host_id} as owner" in out
    code, out, _ = await peer_cli(tmp_path, "call", "host-v1/whoami")
    assert json.loads(out)["role"] == "owner"
    known = json.loads((tmp_path / "known_hosts.json").read_text())
    assert host_id in next(iter(known.values()))


async def test_refusals_are_clear(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    code, _, err = await peer_cli(tmp_path, "teams")
    assert code == 2
    assert "not signed in" in err
    code, _, err = await login(tmp_path, server, password="wrong password")
    assert (code, err) == (
        1,
        "crewhost-peer: the email or the password is wrong (badCredentials)\n",
    )
    await login(tmp_path, server)
    code, _, err = await peer_cli(tmp_path, "call", "no/such-route")
    assert code == 1
    assert "(routeUnknown)" in err
    code, _, err = await peer_cli(tmp_path, "call", "capabilities", "[1]")
    assert (code, err) == (2, "crewhost-peer: the arguments must be a JSON object\n")

    # A pinned key that no longer matches stops the connection loudly.
    account_id = json.loads((tmp_path / "config.json").read_text())["account_id"]
    host_id = server.builtin.services.host_id
    (tmp_path / "known_hosts.json").write_text(json.dumps({account_id: {host_id: "A" * 43}}))
    code, _, err = await peer_cli(tmp_path, "connect")
    assert code == 3
    assert "changed" in err


async def test_an_unreachable_hub_is_a_clear_error(tmp_path: Path) -> None:
    for hub in ("http://127.0.0.1:1", "not a url"):
        code, _, err = await peer_cli(
            tmp_path,
            "login",
            "--hub",
            hub,
            "--email",
            "a@example.com",
            "--password-stdin",
            stdin=b"password\n",
        )
        assert code == 1
        assert "cannot reach the hub" in err
