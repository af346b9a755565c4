"""``crewhost-peer tokens`` as a real process: create (the secret printed once, and
taken by the hub's MCP endpoint), list without secrets, revoke (then refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked

pytestmark = pytest.mark.sqlite_only

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def printed(out: str) -> dict[str, str]:
    """The ``name value`` lines of a create."""
    return {
        line.split()[0]: line.split()[1]
        for line in out.splitlines()
        if line.split() and line.split()[0] in ("token", "secret", "url")
    }


async def initialize(server: RunningHub, url: str, secret: str) -> Any:
    assert url == f"{server.url}/v1/mcp"
    client = server.client(bearer=secret)
    return await client.post("/v1/mcp", INITIALIZE, headers=MCP_HEADERS)


async def test_create_list_and_revoke(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await wait_linked(server)
    await login(tmp_path, server)
    code, out, err = await peer_cli(tmp_path, "tokens", "create", "laptop agent", "--days", "7")
    assert code == 0, err
    made = printed(out)
    assert made["secret"].startswith("crh_pat_")
    assert "shown this once" in out
    opened = await initialize(server, made["url"], made["secret"])
    assert opened.status == 200, opened.raw
    assert opened.headers["Mcp-Session-Id"]

    code, out, err = await peer_cli(tmp_path, "tokens", "list")
    assert code == 0, err
    [header, row] = out.splitlines()
    assert header.split()[:3] == ["ID", "STATE", "SCOPE"]
    assert row.split()[:3] == [made["token"], "live", "browser"]
    assert row.endswith("laptop agent")
    assert made["secret"] not in out
    code, out, _ = await peer_cli(tmp_path, "tokens", "list", "--all")
    assert made["token"] in out

    code, out, err = await peer_cli(tmp_path, "tokens", "revoke", made["token"])
    assert (code, out) == (0, f"revoked {made['token']}\n"), err
    refused = await initialize(server, made["url"], made["secret"])
    assert (refused.status, refused.code) == (401, "accessTokenRevoked")
    code, out, _ = await peer_cli(tmp_path, "tokens", "list")
    assert out.splitlines()[1].split()[1] == "revoked"


async def test_refusals(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await wait_linked(server)
    await login(tmp_path, server)
    code, _, err = await peer_cli(tmp_path, "tokens", "revoke", "8" * 32)
    assert (code, err) == (
        1,
        "crewhost-peer: no such access token (accessTokenNotFound)\n",
    )
    code, _, err = await peer_cli(tmp_path, "tokens", "create", "ci", "--days", "0")
    assert code == 1
    assert "(invalidArgument)" in err
    code, _, err = await peer_cli(tmp_path, "tokens", "create", "ci", "--host", "f" * 32)
    assert (code, err) == (1, "crewhost-peer: no such host (hostNotFound)\n")
