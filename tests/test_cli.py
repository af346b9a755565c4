"""The crewhost command, run as a real process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import sys
from pathlib import Path

import aiohttp
import pytest
import sqlalchemy as sa

from server.config import load_settings
from server.db.engine import Database
from tests.support import commands
from tests.support.commands import CREWHOST, PIPE, serve_arguments
from tests.support.hub_server import RunningHub

ROOT = Path(__file__).resolve().parents[1]


async def run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """A ``crewhost`` command forked from the test process's forker (``commands``)."""
    return await commands.run(CREWHOST, *args, stdin=stdin, env={**os.environ, **(env or {})})


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["serve"],
        ["hub"],
        ["host"],
        ["admin"],
        ["admin", "migrate"],
        ["admin", "create-owner"],
        ["admin", "setup-code"],
        ["admin", "rotate-key"],
        ["admin", "retire-key"],
        ["admin", "backup"],
        ["admin", "restore"],
        ["admin", "doctor"],
        ["admin", "settings"],
    ],
)
async def test_every_command_has_help(command: list[str]) -> None:
    code, out, _ = await run(*command, "--help")
    assert code == 0
    assert out.startswith("usage: crewhost")


async def test_create_owner_then_no_setup_code(tmp_path: Path) -> None:
    data = str(tmp_path)
    code, out, err = await run(
        "admin",
        "create-owner",
        "--data-dir",
        data,
        "--email",
        "Ops@Example.com",
        "--name",
        "Ops",
        "--team",
        "Ops team",
        "--password-stdin",
        stdin=b"a long enough password\n",
    )
    assert code == 0, err
    assert re.fullmatch(r"created owner [0-9a-f]{32}\n", out)
    assert "a long enough password" not in out + err
    code, _, err = await run("admin", "setup-code", "--data-dir", data)
    assert code == 1
    assert "accounts exist" in err
    again = await run(
        "admin",
        "create-owner",
        "--data-dir",
        data,
        "--email",
        "ops@example.com",
        "--name",
        "Ops",
        "--password-stdin",
        stdin=b"a long enough password\n",
    )
    assert again[0] == 2
    assert "exists" in again[2]


async def test_create_owner_checks_its_fields(tmp_path: Path) -> None:
    code, _, err = await run(
        "admin",
        "create-owner",
        "--data-dir",
        str(tmp_path),
        "--email",
        "not-an-email",
        "--name",
        "X",
        "--password-stdin",
        stdin=b"short\n",
    )
    assert code == 2
    assert "email" in err


async def test_a_bad_setting_is_a_clear_error(tmp_path: Path) -> None:
    code, _, err = await run(
        "admin", "migrate", "--data-dir", str(tmp_path), env={"CREWHOST_HUB_PORT": "x"}
    )
    assert code == 2
    assert "hub.port" in err


@pytest.mark.parametrize(
    "url",
    ["notaurl", "nosuchdriver://db/crew", "postgresql+asyncpg://crew:s3cret@127.0.0.1:1/crew"],
)
async def test_a_database_url_that_cannot_serve_is_one_line(tmp_path: Path, url: str) -> None:
    code, _, err = await run(
        "admin", "migrate", "--data-dir", str(tmp_path), env={"CREWHOST_DATABASE_URL": url}
    )
    assert code == 2
    assert (err.count("\n"), err.startswith("crewhost: ")) == (1, True), err
    assert "CREWHOST_DATABASE_URL" in err
    assert "s3cret" not in err


async def test_serve_prints_the_setup_link_and_logs_json(tmp_path: Path) -> None:
    # A fresh interpreter, as a person starts it (the other tests fork theirs).
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.cli",
        *serve_arguments(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        listening = json.loads(await asyncio.wait_for(process.stderr.readline(), 30))
        assert listening["message"] == "hub listening"
        assert listening["level"] == "info"
        url = listening["url"]
        link = ""
        while "#code=" not in link:
            link = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        code = link.strip().split("#code=")[1]
        assert link.strip().startswith(f"{url}/app/setup#code=")
        async with aiohttp.ClientSession() as session:
            async with session.post(
                f"{url}/v1/accounts",
                json={
                    "email": "a@example.com",
                    "name": "A",
                    "password": "p" * 12,
                    "setupCode": code,
                },
                headers={"X-Crewhost-CSRF": "1"},
            ) as reply:
                assert reply.status == 201
            async with session.get(f"{url}/v1/setup") as reply:
                assert (await reply.json())["needsSetup"] is False
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)
    assert process.returncode == 0
    rest = (await process.stderr.read()).decode().splitlines()
    assert all(json.loads(line)["level"] for line in rest)


async def test_a_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, _, err = await run("hub", "--port", port, "--data-dir", str(tmp_path))
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in err
    assert "Traceback" not in err


async def test_an_unenrolled_host_asks_for_a_code(tmp_path: Path) -> None:
    code, _, err = await run("host", "--hub", "http://127.0.0.1:1", "--data-dir", str(tmp_path))
    assert code == 2
    assert "--enrol CODE" in err


async def test_an_unreachable_hub_is_a_clear_error(tmp_path: Path) -> None:
    for hub in ("http://127.0.0.1:1", "not a url"):
        code, _, err = await run("host", "--hub", hub, "--enrol", "x", "--data-dir", str(tmp_path))
        assert code == 2
        assert "cannot reach the hub" in err
        assert "Traceback" not in err


async def test_a_bad_enrolment_code_is_refused(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    code, _, err = await run(
        "host", "--hub", server.url, "--enrol", "not-a-code", "--data-dir", str(tmp_path)
    )
    assert code == 2
    assert "enrolment refused" in err
    assert not (tmp_path / "host" / "link.json").exists()


FAST_HASHING_ENV = {
    "CREWHOST_SECURITY_PASSWORD_HASH_TIME_COST": "1",
    "CREWHOST_SECURITY_PASSWORD_HASH_MEMORY_KIB": "1024",
    "CREWHOST_SECURITY_PASSWORD_HASH_PARALLELISM": "1",
}


def shared_entries(root: Path) -> list[str]:
    """Everything in ``root`` (and ``root``) that group or others may read, write or enter."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & 0o077:
            found.append(f"{path.relative_to(root)} {oct(stat.S_IMODE(mode))}")
    return found


async def test_serve_keeps_the_data_folder_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    process = await commands.start(
        CREWHOST,
        *serve_arguments(data),
        stdout=PIPE,
        stderr=PIPE,
        env={**os.environ, **FAST_HASHING_ENV},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        url = json.loads(await asyncio.wait_for(process.stderr.readline(), 30))["url"]
        link = ""
        while "#code=" not in link:
            link = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        code = link.strip().split("#code=")[1]
        headers = {"X-Crewhost-CSRF": "1", "Origin": url}
        # unsafe: the session cookie of an IP-address host
        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(headers=headers, cookie_jar=jar) as session:
            account = {"email": "a@example.com", "name": "A", "password": "p" * 12}
            async with session.post(
                f"{url}/v1/accounts", json={**account, "setupCode": code, "teamName": "A"}
            ) as reply:
                assert reply.status == 201
            async with session.post(f"{url}/v1/teams", json={"name": "B"}) as reply:
                assert reply.status == 201
                team_id = (await reply.json())["id"]
            async with session.post(f"{url}/v1/teams/{team_id}/invitations", json={}) as reply:
                assert reply.status == 201
        assert (data / "crewhost.db-wal").exists()
        assert (data / "host" / "identity.key").exists()
        assert shared_entries(data) == []
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)
    assert process.returncode == 0
    assert shared_entries(data) == []


async def test_a_command_makes_existing_data_private_and_says_how_much(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, _, err = await run("admin", "migrate", "--data-dir", str(data))
    assert code == 0, err
    # What an older version left: a readable database, tab list and folders.
    team = data / "browser" / "0123456789abcdef0123456789abcdef"
    team.mkdir(parents=True)
    (team / "tabs.json").write_text('{"version": 1, "tabs": [], "marker": "tab-url-secret"}')
    (team / "tabs.json").chmod(0o644)
    (data / "crewhost.db").chmod(0o644)
    for folder in (data, data / "browser", team):
        folder.chmod(0o755)

    code, _, err = await run("admin", "migrate", "--data-dir", str(data), "--log-format", "json")

    assert code == 0, err
    assert shared_entries(data) == []
    lines = [json.loads(line) for line in err.splitlines()]
    assert [line["fixed"] for line in lines if "fixed" in line] == [5]
    assert "tab-url-secret" not in err


async def test_serve_refuses_a_database_newer_than_the_code(tmp_path: Path) -> None:
    code, _, err = await run("admin", "migrate", "--data-dir", str(tmp_path))
    assert code == 0, err
    db = Database(load_settings(env={}, overrides={"data_dir": str(tmp_path)}).database_url)
    try:
        async with db.write() as conn:
            await conn.execute(sa.text("UPDATE alembic_version SET version_num = '0099_future'"))
    finally:
        await db.close()
    code, _, err = await asyncio.wait_for(
        run("serve", "--port", "0", "--data-dir", str(tmp_path)), 60
    )
    assert code == 2
    assert "the database is at revision 0099_future, which this Crewhost does not know" in err
    assert "Traceback" not in err
