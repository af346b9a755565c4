"""``crewhost-peer providers`` as a real process: status, set (key from stdin only), clear."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub

pytestmark = pytest.mark.sqlite_only

KEY = "sk-ant-cli-0123456789"


async def test_status_set_and_clear(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    code, out, err = await peer_cli(tmp_path, "providers", "status")
    assert code == 0, err
    header, *lines = out.splitlines()
    assert header.split() == ["ID", "NAME", "KEY", "USABLE", "MODEL"]
    assert [line.split()[0] for line in lines] == ["anthropic", "openai", "openrouter"]
    assert status_of(out, "anthropic") == [
        "Anthropic",
        "none",
        "no: no key is set",
        "claude-sonnet-4-5",
    ]

    code, out, err = await peer_cli(
        tmp_path, "providers", "set", "Anthropic", stdin=KEY.encode() + b"\n"
    )
    assert (code, out) == (0, "key set for Anthropic (usable)\n"), err
    code, out, err = await peer_cli(tmp_path, "providers", "status")
    assert status_of(out, "anthropic") == ["Anthropic", "set", "yes", "claude-sonnet-4-5"]
    assert KEY not in out + err
    credentials = await server.builtin.services.providers.credentials(
        await first_team(server), "anthropic"
    )
    assert credentials.api_key == KEY

    code, out, _ = await peer_cli(tmp_path, "providers", "clear", "anthropic")
    assert (code, out) == (0, "key cleared for Anthropic\n")
    code, out, _ = await peer_cli(tmp_path, "providers", "status")
    assert status_of(out, "anthropic")[:2] == ["Anthropic", "none"]


async def test_refusals(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    code, _, err = await peer_cli(tmp_path, "providers", "set", "mistral", stdin=b"k\n")
    assert (code, err) == (1, "crewhost-peer: no such provider (providerNotFound)\n")
    code, _, err = await peer_cli(tmp_path, "providers", "set", "openai", stdin=b"\n")
    assert (code, err) == (2, "crewhost-peer: the key is empty\n")
    # The key is never an argument: it would stay in the shell's history and in ps.
    code, _, err = await peer_cli(tmp_path, "providers", "set", "openai", KEY)
    assert code == 2
    assert "unrecognized arguments" in err
    code, out, _ = await peer_cli(tmp_path, "providers", "set", "--help")
    assert code == 0
    assert "standard input" in out


def status_of(out: str, provider_id: str) -> list[str]:
    """The cells after the id in ``provider_id``'s row of ``providers status``."""
    header, *lines = out.splitlines()
    starts = [header.index(column) for column in ("NAME", "KEY", "USABLE", "MODEL")]
    (row,) = [line for line in lines if line.split()[0] == provider_id]
    return [row[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]


async def first_team(server: RunningHub) -> str:
    owner = await server.sign_in("owner@example.com")
    return await server.first_team_id(owner)
