"""``crewhost-peer agents`` as a real process against a hub and its built-in host: `agents`
alone lists, `export` writes the file (and refuses key-like text, naming where), `import`
shows the preview and asks first, then imports into another team, and `--update` shows the
changes with the instructions' diff before updating."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.peer.test_cli import peer_cli
from tests.support.hub_server import PASSWORD, RunningHub

pytestmark = pytest.mark.sqlite_only

SKILL_MD = "---\nname: expenses\ndescription: File an expense report.\n---\n\n# Steps\n"


async def cli_ok(home: Path, *args: str, stdin: bytes = b"") -> str:
    code, out, err = await peer_cli(home, *args, stdin=stdin)
    assert code == 0, err
    return out


async def sign_in(home: Path, server: RunningHub, email: str) -> None:
    await cli_ok(
        home,
        "login",
        "--hub",
        server.url,
        "--email",
        email,
        "--password-stdin",
        stdin=PASSWORD.encode() + b"\n",
    )


async def test_export_then_import_into_another_team_and_update(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    await server.create_owner("other@example.com", "Team B")
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    await sign_in(ours, server, "owner@example.com")
    await sign_in(theirs, server, "other@example.com")
    await cli_ok(ours, "call", "skills-v1/create", json.dumps({"files": {"SKILL.md": SKILL_MD}}))
    agent = json.loads(
        await cli_ok(
            ours,
            "call",
            "agents-v1/create",
            json.dumps({"name": "Clerk", "instructions": "File expenses.\n"}),
        )
    )
    await cli_ok(
        ours,
        "call",
        "skills-v1/enable",
        json.dumps({"name": "expenses", "agentId": agent["id"], "enabled": True}),
    )
    assert (await cli_ok(ours, "agents")).splitlines()[1].split()[-1] == "Clerk"
    assert await cli_ok(ours, "agents") == await cli_ok(ours, "agents", "list")

    file = tmp_path / "clerk.crewhost-agent.zip"
    out = await cli_ok(ours, "agents", "export", "clerk", "-o", str(file))
    assert out == f"wrote {file} ({file.stat().st_size} bytes)\n"

    code, out, _ = await peer_cli(theirs, "agents", "import", str(file), stdin=b"n\n")
    assert code == 1
    assert out.startswith("agent Clerk (content hash ")
    assert "needs a provider like Anthropic (anthropic) with the provider's default" in out
    assert "\nskill      expenses  new\n" in out
    assert out.endswith("import it? [y/N] nothing changed\n")
    assert (await cli_ok(theirs, "agents")).splitlines()[1:] == []

    out = await cli_ok(theirs, "agents", "import", str(file), "--yes")
    assert out.splitlines()[-1].startswith("imported Clerk (")
    assert (await cli_ok(theirs, "agents")).splitlines()[1].split()[-1] == "Clerk"

    await cli_ok(
        ours,
        "call",
        "agents-v1/update",
        json.dumps({"id": agent["id"], "instructions": "File expenses the same day.\n"}),
    )
    await cli_ok(ours, "agents", "export", "clerk", "-o", str(file))
    out = await cli_ok(theirs, "agents", "import", str(file), "--update", "clerk", "--yes")
    assert "change instructions: 15 characters -> 28 characters" in out
    assert "-File expenses.\n+File expenses the same day.\n" in out
    assert out.splitlines()[-1].startswith("updated Clerk (")
    listed = json.loads(await cli_ok(theirs, "call", "agents-v1/list"))["agents"]
    assert [a["instructions"] for a in listed] == ["File expenses the same day.\n"]


async def test_key_like_text_refuses_the_export_naming_where(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    await sign_in(tmp_path, server, "owner@example.com")
    key = "ghp_" + "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"
    await cli_ok(
        tmp_path,
        "call",
        "agents-v1/create",
        json.dumps({"name": "Clerk", "instructions": f"Hi.\nToken {key}\n"}),
    )
    code, _, err = await peer_cli(tmp_path, "agents", "export", "Clerk", "-o", "x.zip")
    assert code == 1
    assert "instructions.md line 2 (GitHub token)" in err
    assert key not in err
    assert err.endswith("(agentTemplateSecretFound)\n")
    assert not (tmp_path / "x.zip").exists()
