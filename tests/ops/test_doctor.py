"""``crewhost admin doctor``: each check's good and bad case, and the exit status."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from yarl import URL

from server.common.crypto.ring import KeyRingFile
from server.config import Settings, load_settings
from server.db.engine import Database
from server.db.tables import providers
from server.ops.doctor import (
    Finding,
    Status,
    check_chromium,
    check_database,
    check_file_modes,
    check_ice_servers,
    check_key_ring,
    check_node_proxy,
    check_port,
    check_stdio_sandbox,
)
from tests.support.hub_server import RunningHub
from tests.support.serving import run
from tests.test_cli_keys import set_provider_key

GOOD_ICE = [{"urls": ["stun:127.0.0.1:3478", "turn:127.0.0.1:3478?transport=udp"]}]


def settings_of(folder: Path, **overrides: Any) -> Settings:
    return load_settings(env={}, overrides={"data_dir": str(folder), **overrides})


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


async def test_chromium(tmp_path: Path) -> None:
    found = only(await check_chromium(settings_of(tmp_path)))
    assert (found.status, "Chromium" in found.detail) == (Status.OK, True)
    missing = only(await check_chromium(settings_of(tmp_path, **{"host.chromium": "/no/such"})))
    assert (missing.status, missing.detail) == (
        Status.FIX,
        "CREWHOST_CHROMIUM names /no/such, which is not an executable",
    )
    broken = tmp_path / "chromium"
    broken.write_text("#!/bin/sh\necho 'cannot open display' >&2\nexit 1\n")
    broken.chmod(0o700)
    failing = only(await check_chromium(settings_of(tmp_path, **{"host.chromium": str(broken)})))
    assert (failing.status, failing.detail) == (
        Status.FIX,
        f"{broken} fails: cannot open display",
    )


async def test_chromiums_headless_shell_is_named_with_its_guard(tmp_path: Path) -> None:
    shell = tmp_path / "chromium-headless-shell"
    shell.write_text("#!/bin/sh\necho 'Chromium 156.0.8078.114'\n")
    shell.chmod(0o700)
    found = only(await check_chromium(settings_of(tmp_path, **{"host.chromium": str(shell)})))
    assert (found.status, found.detail) == (
        Status.OK,
        f"{shell} (Chromium 156.0.8078.114; the headless shell, kept to the address policy "
        "by the host's filtering proxy)",
    )


def stand_in_node(folder: Path, *, honours_proxy: bool) -> Path:
    """A ``node`` on a PATH of its own: it prints its version and, where it honours the
    proxy variables, makes the probe's request through ``HTTP_PROXY`` first."""
    folder.mkdir()
    node = folder / "node"
    fetch = (
        "import urllib.request\n"
        "try:\n    urllib.request.urlopen('http://doctor.invalid/', timeout=5)\n"
        "except OSError:\n    pass\n"
    )
    node.write_text(
        f"#!{sys.executable}\n{fetch if honours_proxy else ''}print('v99.1.0 done', end='')\n"
    )
    node.chmod(0o700)
    return node


async def test_node_behind_the_stdio_proxy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = {"host.mcp_stdio_teams": ["*"]}

    async def verdicts(**overrides: Any) -> list[Finding]:
        return await check_node_proxy(settings_of(tmp_path, **overrides))

    # Nothing to say where no stdio server runs behind the proxy.
    assert await verdicts() == []
    assert await verdicts(**allowed, **{"host.mcp_stdio_network": "host"}) == []
    assert await verdicts(**allowed, **{"host.mcp_stdio_sandbox": False}) == []
    # This machine's own Node.js is asked, whatever it answers.
    real = shutil.which("node")
    if real is not None:
        asked = await asyncio.create_subprocess_exec(
            real, "--version", stdout=asyncio.subprocess.PIPE
        )
        version = (await asyncio.wait_for(asked.communicate(), 30))[0].decode().strip()
        assert f"{real} ({version})" in only(await verdicts(**allowed)).detail
    monkeypatch.setenv("PATH", str(stand_in_node(tmp_path / "honours", honours_proxy=True).parent))
    sends = only(await verdicts(**allowed))
    assert (sends.status, sends.detail) == (
        Status.OK,
        f"{tmp_path}/honours/node (v99.1.0) sends fetch through the stdio servers' proxy",
    )
    monkeypatch.setenv("PATH", str(stand_in_node(tmp_path / "ignores", honours_proxy=False).parent))
    ignores = only(await verdicts(**allowed))
    assert ignores.status is Status.WARN
    assert ignores.detail.endswith(
        "(v99.1.0) ignores HTTP_PROXY: the fetch of a Node.js stdio "
        "MCP server reaches nothing on the proxied network"
    )
    assert ignores.fix is not None
    assert "host.mcp_stdio_network" in ignores.fix
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert await verdicts(**allowed) == []


async def test_stdio_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def verdict(**overrides: Any) -> Finding:
        return only(await check_stdio_sandbox(settings_of(tmp_path, **overrides)))

    assert (await verdict()).detail == "no team may add stdio MCP servers"
    allowed = {"host.mcp_stdio_teams": ["*"]}
    runs = await verdict(**allowed)
    assert runs.status is Status.OK
    assert runs.detail.endswith(
        "runs the stdio MCP servers of *, reaching public addresses through the host's "
        "proxy, showing nothing besides /usr"
    )
    shared = await verdict(**allowed, **{"host.mcp_stdio_network": "host"})
    assert shared.status is Status.WARN
    assert "with the host's own network, its loopback's services included" in shared.detail
    off = await verdict(**allowed, **{"host.mcp_stdio_sandbox": False})
    assert (off.status, off.detail) == (
        Status.WARN,
        "off: the stdio MCP servers of * run as this user, seeing what it sees",
    )
    absent = tmp_path / "no-such-runtime"
    listed = await verdict(**allowed, **{"host.mcp_stdio_paths": [str(absent)]})
    assert listed.status is Status.FIX
    assert listed.detail.startswith("the stdio sandbox could not start: ")
    assert str(absent) in listed.detail
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    missing = await verdict(**allowed)
    assert missing.status is Status.FIX
    assert "bubblewrap" in missing.detail


async def test_database_revision(tmp_path: Path) -> None:
    settings = settings_of(tmp_path)
    assert only(await check_database(settings)).status is Status.OK  # none yet
    db = Database(settings.database_url)
    try:
        await db.migrate(to="0001")
        behind = only(await check_database(settings))
        assert (behind.status, behind.detail.startswith("revision 0001, behind")) == (
            Status.WARN,
            True,
        )
        await db.migrate()
        current = only(await check_database(settings))
        assert (current.status, "(the newest)" in current.detail) == (Status.OK, True)
        async with db.write() as conn:
            await conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999_future'"))
    finally:
        await db.close()
    newer = only(await check_database(settings))
    assert newer.status is Status.FIX
    assert newer.detail.startswith("revision 9999_future is newer than this Crewhost")
    unreachable = settings_of(
        tmp_path, **{"database.url": "postgresql+asyncpg://nobody:pw@127.0.0.1:1/none"}
    )
    down = only(await check_database(unreachable))
    assert (down.status, "pw" in down.detail) == (Status.FIX, False)


async def test_file_modes(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "host").mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    (root / "host" / "identity.key").write_bytes(b"k")
    (root / "host" / "identity.key").chmod(0o600)
    assert only(await check_file_modes(settings_of(root))).status is Status.OK
    (root / "host" / "identity.key").chmod(0o644)
    shared = only(await check_file_modes(settings_of(root)))
    assert shared.status is Status.FIX
    assert shared.detail == f"{root} has 1 entries open to other users: host/identity.key"
    assert shared.fix is not None
    assert f"chmod -R go-rwx {root}" in shared.fix


async def test_key_ring(tmp_path: Path) -> None:
    assert only(await check_key_ring(settings_of(tmp_path))).status is Status.OK  # none yet
    key_id = await set_provider_key(tmp_path, "sk-doctor-secret")
    good = only(await check_key_ring(settings_of(tmp_path)))
    assert (good.status, good.detail) == (
        Status.OK,
        f"1 keys (active {key_id}), opens all 1 secrets",
    )
    ring = tmp_path / "host" / "key-ring.json"
    plain = ring.read_bytes()
    # A passphrase set on a plain ring: the doctor says how to wrap it, and changes nothing.
    passphrase = settings_of(tmp_path, **{"host.master_passphrase": "a master passphrase"})
    not_wrapped = only(await check_key_ring(passphrase))
    assert (not_wrapped.status, "is not wrapped" in not_wrapped.detail) == (Status.FIX, True)
    assert not_wrapped.fix is not None
    assert "crewhost admin wrap-key-ring" in not_wrapped.fix
    assert ring.read_bytes() == plain
    KeyRingFile(ring).wrap("a master passphrase")
    assert only(await check_key_ring(passphrase)).status is Status.OK
    locked = only(await check_key_ring(settings_of(tmp_path)))
    assert (locked.status, "passphrase" in locked.detail) == (Status.FIX, True)
    ring.unlink()
    missing = only(await check_key_ring(settings_of(tmp_path)))
    assert (missing.status, missing.detail) == (
        Status.FIX,
        f"{ring} is missing, but 1 secrets need it",
    )


async def test_key_ring_opens_every_secret_and_names_one_that_does_not(tmp_path: Path) -> None:
    await set_provider_key(tmp_path, "sk-doctor-secret")
    settings = settings_of(tmp_path)
    assert only(await check_key_ring(settings)).status is Status.OK
    # Same key id, changed sealed bytes: only opening it shows it is broken.
    db = Database(settings.database_url)
    try:
        async with db.write() as conn:
            row = (await conn.execute(sa.select(providers.c.id, providers.c.api_key))).one()
            row_id, sealed = row.id, bytes(row.api_key)
            damaged = sealed[:-1] + bytes([sealed[-1] ^ 0x01])
            await conn.execute(
                providers.update().where(providers.c.id == row_id).values(api_key=damaged)
            )
    finally:
        await db.close()
    before = (tmp_path / "crewhost.db").read_bytes()
    broken = only(await check_key_ring(settings))
    assert broken.status is Status.FIX
    assert broken.detail.startswith(
        f"1 of 1 secrets do not open: providers row {row_id} column api_key ("
    ), broken.detail
    assert "sk-doctor-secret" not in broken.render()
    assert (tmp_path / "crewhost.db").read_bytes() == before
    os.chmod(tmp_path, 0o700)
    code, out, _ = await run("admin", "doctor", "--data-dir", str(tmp_path))
    assert code == 1
    assert f"FIX   key ring: 1 of 1 secrets do not open: providers row {row_id}" in out


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_port(tmp_path: Path, server: RunningHub) -> None:
    port = free_port()
    free = only(await check_port(settings_of(tmp_path, **{"hub.port": port})))
    assert (free.status, free.detail) == (Status.OK, f"127.0.0.1:{port} is free")
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken_port = other.getsockname()[1]
        taken = only(await check_port(settings_of(tmp_path, **{"hub.port": taken_port})))
    assert (taken.status, taken.detail) == (
        Status.FIX,
        f"127.0.0.1:{taken_port} is taken by another program",
    )
    ours = URL(server.url).port
    running = only(await check_port(settings_of(tmp_path, **{"hub.port": ours})))
    assert (running.status, running.detail) == (
        Status.OK,
        f"127.0.0.1:{ours} is this server's, running",
    )


async def test_stun_and_turn(tmp_path: Path) -> None:
    none = only(await check_ice_servers(settings_of(tmp_path)))
    assert none.status is Status.WARN
    good = settings_of(tmp_path, **{"rtc.ice_servers": GOOD_ICE, "rtc.turn_secret": "s"})
    assert only(await check_ice_servers(good)).status is Status.OK
    bad = settings_of(
        tmp_path,
        **{
            "rtc.ice_servers": [
                {"urls": ["turn:127.0.0.1:3478", "http://127.0.0.1", "stun:turn.invalid:3478"]},
                {"urls": ["stun:127.0.0.1:99999"]},
            ]
        },
    )
    found = only(await check_ice_servers(bad))
    assert found.status is Status.FIX
    assert found.detail.split("; ") == [
        "turn:127.0.0.1:3478: a TURN server needs a username and credential, or rtc.turn_secret",
        "http://127.0.0.1: not a stun:, stuns:, turn: or turns: address",
        "stun:turn.invalid:3478: the name turn.invalid does not resolve",
        "stun:127.0.0.1:99999: the port is not a number from 1 to 65535",
    ]


async def test_the_command_exits_non_zero_only_when_something_must_be_fixed(
    tmp_path: Path,
) -> None:
    await set_provider_key(tmp_path, "sk-doctor-secret")
    os.chmod(tmp_path, 0o700)
    env = {
        "CREWHOST_RTC_ICE_SERVERS": '[{"urls": ["stun:127.0.0.1:3478"]}]',
        "CREWHOST_HUB_PORT": str(free_port()),
    }
    code, out, err = await run("admin", "doctor", "--data-dir", str(tmp_path), env=env)
    assert code == 0, out + err
    assert [line.split()[0] for line in out.splitlines() if not line.startswith(" ")] == ["ok"] * 7
    database = tmp_path / "crewhost.db"
    os.chmod(database, 0o644)
    code, out, _ = await run("admin", "doctor", "--data-dir", str(tmp_path), env=env)
    assert code == 1
    assert "FIX   data folder:" in out
    assert "      fix: chmod -R go-rwx" in out
    assert stat.S_IMODE(database.stat().st_mode) == 0o644  # the doctor only looks
