"""``crewhost-peer`` as a real process against a real hub and its built-in host."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from peer import cli
from tests.support import commands
from tests.support.commands import PEER
from tests.support.hub_server import PASSWORD, RunningHub

pytestmark = pytest.mark.sqlite_only


async def peer_cli(home: Path, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """``crewhost-peer`` forked from the test process's forker (``tests.support.commands``)."""
    return await commands.run(
        PEER, *args, stdin=stdin, env={**os.environ, "CREWHOST_PEER_HOME": str(home)}
    )


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
    owner = await server.sign_up_owner(team="Ops")
    ops = await server.first_team_id(owner)
    host_id = server.builtin.services.host_id
    code, out, _ = await login(tmp_path, server)
    assert (code, out) == (0, "signed in as owner@example.com\n")
    config = tmp_path / "config.json"
    assert config.stat().st_mode & 0o777 == 0o600
    assert PASSWORD not in config.read_text()

    code, out, _ = await peer_cli(tmp_path, "teams")
    assert code == 0
    assert out.splitlines() == [f"{'ID':<{len(ops)}}  ROLE   NAME", f"{ops}  owner  Ops"]
    code, out, _ = await peer_cli(tmp_path, "hosts")
    header, row = out.splitlines()
    assert header.split() == ["ID", "STATE", "NAME"]
    assert row.split()[:2] == [host_id, "online"]
    assert row.index("online") == header.index("STATE")

    code, out, _ = await peer_cli(tmp_path, "connect")
    assert code == 0
    assert f"connected to {host_id} as owner" in out
    code, out, _ = await peer_cli(tmp_path, "call", "host-v1/whoami")
    assert json.loads(out)["role"] == "owner"
    known = json.loads((tmp_path / "known_hosts.json").read_text())
    assert host_id in next(iter(known.values()))

    # --team takes a team's name, in any case, as well as its id.
    code, out, err = await peer_cli(tmp_path, "call", "host-v1/whoami", "--team", "oPS")
    assert code == 0, err
    assert json.loads(out)["teamId"] == ops
    created = await owner.post("/v1/teams", {"name": "OPS"})
    assert created.status == 201, created.body
    twin = created.body["id"]
    code, out, err = await peer_cli(tmp_path, "call", "host-v1/whoami", "--team", twin)
    assert code == 0, err
    assert json.loads(out)["teamId"] == twin
    code, out, err = await peer_cli(tmp_path, "hosts", "--team", "Ops")
    assert (code, out) == (1, "")
    named = [f"{ops} (Ops)", f"{twin} (OPS)"]
    assert err in {
        f'crewhost-peer: 2 of your teams are named "Ops"; give an id: {ids} (teamNotFound)\n'
        for ids in (", ".join(named), ", ".join(reversed(named)))
    }, err
    code, out, err = await peer_cli(tmp_path, "connect", "--team", "Nowhere")
    assert (code, out) == (1, "")
    assert err.startswith('crewhost-peer: none of your teams is named "Nowhere" or has that id; ')
    assert err.endswith(' yours: "Ops", "OPS" (teamNotFound)\n') or err.endswith(
        ' yours: "OPS", "Ops" (teamNotFound)\n'
    )


async def test_refusals_are_clear(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    code, _, err = await peer_cli(tmp_path, "teams")
    assert code == 2
    assert "not signed in" in err
    # Arguments that are not one JSON object are a usage error, found before anything is sent.
    code, out, err = await peer_cli(tmp_path, "call", "capabilities", "{tabId: 1}")
    assert (code, out) == (2, "")
    assert err.startswith("usage: crewhost-peer call ")
    assert "error: argument JSON: not valid JSON (Expecting property name" in err
    code, _, err = await peer_cli(tmp_path, "call", "capabilities", "[1]")
    assert code == 2
    assert "error: argument JSON: must be one JSON object" in err
    code, out, _ = await peer_cli(tmp_path, "call", "--help")
    assert code == 0
    assert "2 when JSON is not a JSON object" in " ".join(out.split())
    code, _, err = await login(tmp_path, server, password="wrong password")
    assert (code, err) == (
        1,
        "crewhost-peer: the email or the password is wrong (badCredentials)\n",
    )
    await login(tmp_path, server)
    code, _, err = await peer_cli(tmp_path, "call", "no/such-route")
    assert code == 1
    assert "(routeUnknown)" in err

    # A pinned key that no longer matches stops the connection loudly, and says how to
    # accept a key that changed for a good reason.
    account_id = json.loads((tmp_path / "config.json").read_text())["account_id"]
    host_id = server.builtin.services.host_id
    known_hosts = tmp_path / "known_hosts.json"
    known = json.loads(known_hosts.read_text())
    known[account_id][host_id] = "A" * 43
    known_hosts.write_text(json.dumps(known, indent=2, sort_keys=True))  # as the peer writes it
    code, _, err = await peer_cli(tmp_path, "connect")
    assert code == 3
    assert f"the identity key of host {host_id} changed" in err
    assert f"remove the line naming {host_id} from the known-hosts file {known_hosts}," in err
    lines = known_hosts.read_text().splitlines()
    known_hosts.write_text("\n".join(line for line in lines if host_id not in line))
    code, out, err = await peer_cli(tmp_path, "connect")
    assert code == 0, err
    assert f"connected to {host_id}" in out
    # A hand edit gone wrong is named, not a traceback.
    known_hosts.write_text(known_hosts.read_text().replace("}", "", 1))
    code, _, err = await peer_cli(tmp_path, "connect")
    assert code == 3
    assert err.startswith(f"crewhost-peer: the known-hosts file {known_hosts} is not valid JSON")


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


def test_a_connection_that_fails_silently_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def times_out(*_: Any) -> int:
        raise TimeoutError

    monkeypatch.setattr(cli, "_run", times_out)
    assert cli.main(["connect"]) == 1
    assert capsys.readouterr().err == "crewhost-peer: the connection failed: TimeoutError\n"
