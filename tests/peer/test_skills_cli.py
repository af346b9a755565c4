"""``crewhost-peer skills`` as a real process against a hub and its built-in host: push a
folder, list and show it, pull it as a ``.zip`` and as a folder, push the folder back as a
new version, enable it for an agent (which then lists it), and a refused archive."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub

pytestmark = pytest.mark.sqlite_only

SKILL_MD = """---
name: file-expenses
description: File an expense report in the team's expense tool.
license: Apache-2.0
---

# Filing an expense
1. Open the expense tool.
2. Fill in the amount from the receipt.
"""


async def cli_ok(home: Path, *args: str) -> str:
    code, out, err = await peer_cli(home, *args)
    assert code == 0, err
    return out


async def test_push_list_show_pull_and_enable(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    folder = tmp_path / "file-expenses"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "references" / "policy.md").write_text("Receipts over 50 EUR.\n")
    (folder / ".DS_Store").write_bytes(b"junk")

    assert await cli_ok(tmp_path, "skills", "push", str(folder)) == (
        "pushed file-expenses version 1\n"
    )
    header, row = (await cli_ok(tmp_path, "skills", "list")).splitlines()
    assert header.split() == ["NAME", "STATE", "VERSION", "AGENTS", "DESCRIPTION"]
    assert row.split()[:4] == ["file-expenses", "saved", "1", "0"]
    shown = await cli_ok(tmp_path, "skills", "show", "file-expenses")
    assert shown.startswith("file-expenses (saved, version 1 of 1)\n---\nname: file-expenses")
    assert "references/policy.md  22" in shown

    out = tmp_path / "pulled"
    assert await cli_ok(tmp_path, "skills", "pull", "file-expenses", "--out", str(out)) == (
        f"wrote {out / 'file-expenses.zip'}\n"
    )
    with zipfile.ZipFile(io.BytesIO((out / "file-expenses.zip").read_bytes())) as pulled:
        assert sorted(pulled.namelist()) == [
            "file-expenses/SKILL.md",
            "file-expenses/references/policy.md",
        ]
    await cli_ok(tmp_path, "skills", "pull", "file-expenses", "--out", str(out), "--extract")
    extracted = out / "file-expenses"
    assert (extracted / "SKILL.md").read_text() == SKILL_MD
    # Edited where it was pulled to, and pushed back: a new version.
    (extracted / "SKILL.md").write_text(SKILL_MD + "3. Attach the receipt.\n")
    assert await cli_ok(tmp_path, "skills", "push", str(extracted), "--replace") == (
        "pushed file-expenses version 2\n"
    )
    code, _, err = await peer_cli(tmp_path, "skills", "push", str(out / "file-expenses.zip"))
    assert code == 1
    assert err.endswith("(skillNameTaken)\n")

    await cli_ok(tmp_path, "call", "agents-v1/create", '{"name": "Clerk"}')
    assert await cli_ok(tmp_path, "skills", "enable", "file-expenses", "--agent", "clerk") == (
        "file-expenses given to Clerk\n"
    )
    agents = json.loads(await cli_ok(tmp_path, "call", "agents-v1/list"))["agents"]
    listed = json.loads(
        await cli_ok(
            tmp_path, "call", "skills-v1/agent_skills", json.dumps({"agentId": agents[0]["id"]})
        )
    )
    assert [s["name"] for s in listed["skills"]] == ["file-expenses"]


async def test_a_refused_archive_says_why_and_writes_nothing(
    server: RunningHub, tmp_path: Path
) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as made:
        made.writestr("file-expenses/SKILL.md", SKILL_MD)
        made.writestr("file-expenses/../../escape.txt", "x")
    code, _, err = await peer_cli(tmp_path, "skills", "push", str(bad))
    assert code == 1
    assert "(badPath)" in err
    assert err.endswith("(skillArchiveRefused)\n")
    assert (await cli_ok(tmp_path, "skills", "list")).splitlines()[1:] == []
