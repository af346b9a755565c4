"""``crewhost-peer mcp`` as a real process against a hub and its built-in host: add a stdio
server (its value read from stdin, never printed), list, test, tools, remove."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub

pytestmark = pytest.mark.sqlite_only

ROOT = Path(__file__).resolve().parents[2]
SECRET = "cli-s3cr3t-label"


async def test_add_list_test_tools_and_remove(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    code, out, err = await peer_cli(
        tmp_path,
        "mcp",
        "add",
        "notes",
        "--command",
        sys.executable,
        "--arg=-m",
        "--arg",
        "tests.support.fakes.mcp_servers",
        "--arg",
        "notes",
        "--env",
        "PYTHONPATH",
        "--env",
        "NOTES_LABEL",
        stdin=f"{ROOT}\n{SECRET}\n".encode(),
    )
    assert (code, out) == (0, "added notes (stdio); values set: NOTES_LABEL, PYTHONPATH\n"), err

    code, out, err = await peer_cli(tmp_path, "mcp", "list")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split()[:5] == ["NAME", "TRANSPORT", "STATE", "STATUS", "TOOLS"]
    assert row.split()[:4] == ["notes", "stdio", "on", "idle"]
    assert SECRET not in out

    code, out, err = await peer_cli(tmp_path, "mcp", "test", "notes")
    assert code == 0, err
    assert out.startswith("notes: connected\n")

    code, out, err = await peer_cli(tmp_path, "mcp", "tools", "notes")
    assert code == 0, err
    tools = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "read-only" in tools["mcp__notes__list_notes"]
    assert tools["mcp__notes__add_note"].endswith("Keep a note.")

    code, out, err = await peer_cli(tmp_path, "mcp", "remove", "notes")
    assert (code, out) == (0, "removed notes\n"), err
    code, _, err = await peer_cli(tmp_path, "mcp", "test", "notes")
    assert (code, err) == (
        1,
        "crewhost-peer: no MCP server named notes in the team (mcpServerNotFound)\n",
    )


async def test_a_server_that_fails_exits_1_with_the_reason(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    code, _, err = await peer_cli(
        tmp_path, "mcp", "add", "gone", "--command", str(tmp_path / "no-such-program")
    )
    assert code == 0, err
    code, out, _ = await peer_cli(tmp_path, "mcp", "test", "gone")
    assert code == 1
    assert out.startswith("gone: error: its command was not found")
    # A stdio server has nothing to sign in to.
    code, _, err = await peer_cli(tmp_path, "mcp", "sign-in", "gone")
    assert code == 1
    assert "(mcpSignInNotNeeded)" in err


async def test_an_oauth_client_is_entered_with_its_secret_from_stdin(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    secret = "cli-client-s3cr3t"
    code, out, err = await peer_cli(
        tmp_path,
        "mcp",
        "add",
        "wiki",
        "--url",
        "https://1.1.1.1/mcp",
        "--oauth-client-id",
        "crewhost-wiki",
        "--oauth-client-secret-stdin",
        stdin=f"{secret}\n".encode(),
    )
    expected = "added wiki (http); values set: none; OAuth client crewhost-wiki (secret set)\n"
    assert (code, out) == (0, expected), err
    # The secret is cleared with an empty line, then the client with an empty id.
    code, out, err = await peer_cli(
        tmp_path, "mcp", "update", "wiki", "--oauth-client-secret-stdin", stdin=b"\n"
    )
    assert (code, out) == (0, "updated wiki; OAuth client crewhost-wiki (no secret)\n"), err
    code, out, err = await peer_cli(tmp_path, "mcp", "update", "wiki", "--oauth-client-id", "")
    assert (code, out) == (0, "updated wiki\n"), err
    for text in (out, err):
        assert secret not in text
