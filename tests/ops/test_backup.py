"""Backups taken from a running server under write load restore into a server that works."""

from __future__ import annotations

import asyncio
import getpass
import io
import os
import re
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
import sqlalchemy as sa
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL, make_url

from server import admin, cli
from server.common.clock import SystemClock
from server.common.crypto.archive import (
    CHUNK_BYTES,
    ArchiveTampered,
    SealingWriter,
    open_stream,
    seal_stream,
)
from server.config import Settings, load_settings
from server.db.engine import ALEMBIC_DIR, Database
from server.db.tables import (
    accounts,
    agents,
    browser_profiles,
    invitations,
    metadata,
    sessions,
    teams,
)
from server.host.services.keys import SecretKeys, key_ring_file
from server.host.services.memories import MemoryService
from server.host.services.providers import ProviderService
from server.ops import backup as backup_module
from tests.support.databases import scratch_postgres_database
from tests.support.serving import run, serving

PASSWORD = "correct horse battery"
PASSPHRASE = b"a long backup passphrase\n"
CSRF = {"X-Crewhost-CSRF": "1"}
# Rows the write load never touches: they must come back exactly.
UNCHANGED = ("accounts", "agents", "browser_profiles", "agent_memories", "providers")

MOST_LOAD_TEAMS = 90
WARM_WRITES = 5

pytestmark = pytest.mark.timeout(240)


def settings_of(folder: Path, database_url: str = "") -> Settings:
    return load_settings(
        env={},
        overrides={
            "data_dir": str(folder),
            "database.url": database_url,
            "security.password_hash_time_cost": 1,
            "security.password_hash_memory_kib": 1024,
            "security.password_hash_parallelism": 1,
        },
    )


async def seed(folder: Path, database_url: str = "") -> str:
    """An owner and team, an agent with a memory, a profile and a provider key; the team id."""
    settings = settings_of(folder, database_url)
    await admin.create_owner(settings, "owner@example.com", "Owner", PASSWORD, "Team A")
    db = Database(settings.database_url)
    try:
        async with db.read() as conn:
            team_id: str = (await conn.execute(sa.select(teams.c.id))).scalar_one()
        agent_id = uuid.uuid4().hex
        async with db.write() as conn:
            await conn.execute(
                agents.insert().values(
                    id=agent_id,
                    team_id=team_id,
                    name="Scout",
                    own_browser_session=False,
                    created_at=time.time(),
                )
            )
            await conn.execute(
                browser_profiles.insert().values(
                    id=uuid.uuid4().hex,
                    team_id=team_id,
                    name="Work",
                    hue=120,
                    created_at=time.time(),
                )
            )
        await MemoryService(db, SystemClock()).add_memory(team_id, agent_id, "likes tea", None)
        async with SecretKeys(db, key_ring_file(settings)).open_box() as box:
            await ProviderService(db, SystemClock(), box, lambda *_: None).set_key(
                team_id, "openai", "sk-backup-secret"
            )
    finally:
        await db.close()
    return team_id


async def all_rows(folder: Path, database_url: str = "") -> dict[str, set[tuple[Any, ...]]]:
    """Every row of every table the code declares (so later tables are covered too)."""
    db = Database(settings_of(folder, database_url).database_url)
    try:
        async with db.read() as conn:
            return {
                table.name: {
                    tuple(v if isinstance(v, Hashable) else repr(v) for v in row)
                    for row in await conn.execute(sa.select(table))
                }
                for table in metadata.sorted_tables
            }
    finally:
        await db.close()


async def provider_key(folder: Path, team_id: str) -> str | None:
    settings = settings_of(folder)
    db = Database(settings.database_url)
    try:
        async with SecretKeys(db, key_ring_file(settings)).open_box() as box:
            service = ProviderService(db, SystemClock(), box, lambda *_: None)
            return (await service.credentials(team_id, "openai")).api_key
    finally:
        await db.close()


async def sign_in(session: aiohttp.ClientSession, url: str) -> None:
    async with session.post(
        f"{url}/v1/sessions",
        json={"email": "owner@example.com", "password": PASSWORD, "client": "browser"},
        headers={**CSRF, "Origin": url},
    ) as reply:
        assert reply.status == 201, await reply.text()


async def write_load(
    url: str, acknowledged: list[str], warm: asyncio.Event, stop: asyncio.Event
) -> None:
    """Create teams one after another (a team counts once its 201 has arrived), then rename
    the last one again and again once the account is in as many teams as it may be."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        await sign_in(session, url)
        while not stop.is_set():
            if len(acknowledged) >= MOST_LOAD_TEAMS:
                async with session.patch(
                    f"{url}/v1/teams/{acknowledged[-1]}",
                    json={"name": f"Renamed {time.monotonic()}"},
                    headers={**CSRF, "Origin": url},
                ) as reply:
                    assert reply.status == 200, await reply.text()
                continue
            async with session.post(
                f"{url}/v1/teams",
                json={"name": f"Load {len(acknowledged)}"},
                headers={**CSRF, "Origin": url},
            ) as reply:
                assert reply.status == 201, await reply.text()
                acknowledged.append((await reply.json())["id"])
            if len(acknowledged) >= WARM_WRITES:
                warm.set()


def names_in(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def modes(root: Path) -> set[tuple[str, int]]:
    found = {("/", stat.S_IMODE(root.stat().st_mode))}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = Path(folder) / name
            found.add((str(path.relative_to(root)), stat.S_IMODE(path.lstat().st_mode)))
    return found


async def test_a_backup_under_write_load_restores_into_a_working_server(tmp_path: Path) -> None:
    original, restored, archive = tmp_path / "data", tmp_path / "restored", tmp_path / "b.crew"
    team_id = await seed(original)
    acknowledged: list[str] = []
    stop = asyncio.Event()
    async with serving(original, expect_setup=False) as served:
        warm = asyncio.Event()
        load = asyncio.create_task(write_load(served.url, acknowledged, warm, stop))
        await asyncio.wait_for(warm.wait(), 60)
        before = list(acknowledged)
        code, out, err = await run(
            "admin",
            "backup",
            "--out",
            str(archive),
            "--data-dir",
            str(original),
            stdin=PASSPHRASE,
        )
        assert code == 0, err
        assert "backed up the sqlite database" in out
        stop.set()
        await load
        during = list(acknowledged)
    assert len(during) > len(before)  # the backup was taken while writes went on
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert b"sk-backup-secret" not in archive.read_bytes()

    code, out, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(restored), stdin=PASSPHRASE
    )
    assert code == 0, err
    assert all(
        mode == (0o700 if (restored / name).is_dir() or name == "/" else 0o600)
        for name, mode in modes(restored)
    ), modes(restored)
    assert (restored / "host" / "key-ring.json").read_bytes() == (
        original / "host" / "key-ring.json"
    ).read_bytes()
    assert (restored / "host" / "identity.key").read_bytes() == (
        original / "host" / "identity.key"
    ).read_bytes()

    then, now = await all_rows(original), await all_rows(restored)
    for name in UNCHANGED:
        assert now[name] == then[name], name
    restored_teams = {row[0] for row in now["teams"]}
    assert set(before) <= restored_teams <= {row[0] for row in then["teams"]}
    assert now["memberships"] <= then["memberships"]
    assert len(now["memberships"]) == len(restored_teams)
    assert all(now[name] for name in UNCHANGED)
    assert await provider_key(restored, team_id) == "sk-backup-secret"

    # The restored folder serves: the owner signs in and sees every backed-up team.
    async with (
        serving(restored, expect_setup=False) as served,
        aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session,
    ):
        await sign_in(session, served.url)
        async with session.get(f"{served.url}/v1/teams") as reply:
            listed = {team["id"] for team in (await reply.json())["teams"]}
    assert listed == restored_teams


async def test_refusals_are_clear_and_leave_nothing_behind(tmp_path: Path) -> None:
    original, archive = tmp_path / "data", tmp_path / "b.crew"
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert (code, "there is no database at" in err, archive.exists()) == (2, True, False)
    assert not original.exists()
    await seed(original)
    code, _, err = await run("admin", "backup", "--out", str(archive), "--data-dir", str(original))
    assert (code, "needs a passphrase" in err, archive.exists()) == (2, True, False)
    inside = original / "b.crew"
    code, _, err = await run(
        "admin", "backup", "--out", str(inside), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert (code, "is inside the data folder" in err, inside.exists()) == (2, True, False)
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert code == 0, err

    target = tmp_path / "target"
    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(target), stdin=b"wrong passphrase\n"
    )
    assert (code, err) == (2, "crewhost: the passphrase does not open this backup\n")
    assert not target.exists()

    sealed = bytearray(archive.read_bytes())
    for offset in (len(sealed) // 2, len(sealed) - 1):
        tampered = tmp_path / f"tampered-{offset}.crew"
        changed = bytearray(sealed)
        changed[offset] ^= 0x01
        tampered.write_bytes(bytes(changed))
        code, _, err = await run(
            "admin", "restore", str(tampered), "--data-dir", str(target), stdin=PASSPHRASE
        )
        assert code == 2
        assert "the backup was changed" in err
        assert not target.exists()
    cut = tmp_path / "cut.crew"
    cut.write_bytes(bytes(sealed[: len(sealed) // 2]))
    code, _, err = await run(
        "admin", "restore", str(cut), "--data-dir", str(target), stdin=PASSPHRASE
    )
    assert (code, "cut off or changed" in err) == (2, True)
    not_backup = tmp_path / "notes.txt"
    not_backup.write_text("hello")
    code, _, err = await run(
        "admin", "restore", str(not_backup), "--data-dir", str(target), stdin=PASSPHRASE
    )
    assert (code, err) == (2, "crewhost: this file is not a Crewhost backup\n")

    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert (code, "is not empty" in err) == (2, True)


async def test_a_postgresql_backup_dumps_through_pg_dump_and_loads_back(tmp_path: Path) -> None:
    original, restored, archive = tmp_path / "data", tmp_path / "restored", tmp_path / "b.crew"
    async with scratch_postgres_database() as url, scratch_postgres_database() as fresh:
        env = {"CREWHOST_DATABASE_URL": url}
        await seed(original, url)
        await add_session_and_invitation(original, url)
        code, out, err = await run(
            "admin",
            "backup",
            "--out",
            str(archive),
            "--data-dir",
            str(original),
            stdin=PASSPHRASE,
            env=env,
        )
        assert code == 0, err
        said = re.fullmatch(
            r"backed up the postgresql database \(revision (\w+); (.*)\) and \d+ files to .*\n",
            out,
        )
        assert said is not None, out
        counts = {name: count for count, name in (p.split(" ") for p in said.group(2).split(", "))}
        assert said.group(1) == head_revision()
        assert {name: counts[name] for name in ("accounts", "sessions", "providers")} == {
            "accounts": "1",
            "sessions": "1",
            "providers": "1",
        }
        # A load that fails (a view in the way, which no table check sees) takes back the
        # folder it restored, and tells psql's error alone.
        libpq_fresh = make_url(fresh).set(drivername="postgresql").render_as_string(False)
        await psql(libpq_fresh, "CREATE VIEW accounts AS SELECT 1 AS id")
        code, out, err = await run(
            "admin",
            "restore",
            str(archive),
            "--data-dir",
            str(restored),
            "--sign-out-everyone",
            stdin=PASSPHRASE,
            env={"CREWHOST_DATABASE_URL": fresh},
        )
        assert (code, "could not be loaded" in err, "already exists" in err) == (2, True, True)
        assert "DETAIL" not in err, err
        assert "CONTEXT" not in err, err
        assert not restored.exists()
        await psql(libpq_fresh, "DROP VIEW accounts")
        # With the database to restore into named, the restore loads the dump into it, in
        # the same transaction as the sign-outs, and keeps no copy of it.
        code, out, err = await run(
            "admin",
            "restore",
            str(archive),
            "--data-dir",
            str(restored),
            "--sign-out-everyone",
            stdin=PASSPHRASE,
            env={"CREWHOST_DATABASE_URL": fresh},
        )
        assert code == 0, err
        assert f"and the database into CREWHOST_DATABASE_URL's (revision {head_revision()})" in out
        assert not (restored / "postgres.sql").exists()
        assert (restored / "host" / "key-ring.json").is_file()
        # A database with tables already is refused before anything is touched.
        again = tmp_path / "again"
        code, out, err = await run(
            "admin",
            "restore",
            str(archive),
            "--data-dir",
            str(again),
            stdin=PASSPHRASE,
            env={"CREWHOST_DATABASE_URL": fresh},
        )
        assert (code, out, "has tables already" in err) == (2, "", True), err
        assert not again.exists()
        # So is a database that cannot be reached, without the URL's password.
        missing = make_url(fresh).set(password="not-shown", database="no_such_database")
        code, out, err = await run(
            "admin",
            "restore",
            str(archive),
            "--data-dir",
            str(again),
            stdin=PASSPHRASE,
            env={"CREWHOST_DATABASE_URL": missing.render_as_string(False)},
        )
        assert (code, "cannot reach the database" in err) == (2, True), err
        assert "no_such_database" in err
        assert "not-shown" not in err
        assert not again.exists()
        then, now = await all_rows(original, url), await all_rows(restored, fresh)
        assert (len(then["sessions"]), now["sessions"]) == (1, set())
        assert signed_out(now["invitations"]) == then["invitations"]
        for name in then.keys() - {"sessions", "invitations"}:
            assert now[name] == then[name], name


async def psql(url: str, statement: str) -> None:
    done = await asyncio.to_thread(
        subprocess.run, ["psql", "-X", "-q", "-c", statement, url], capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr


def head_revision() -> str:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


async def add_session_and_invitation(folder: Path, database_url: str = "") -> None:
    """A signed-in session of the owner and an open invitation to the team."""
    db = Database(settings_of(folder, database_url).database_url)
    try:
        async with db.write() as conn:
            account_id: str = (await conn.execute(sa.select(accounts.c.id))).scalar_one()
            team_id: str = (await conn.execute(sa.select(teams.c.id))).scalar_one()
            now = time.time()
            await conn.execute(
                sessions.insert().values(
                    id=uuid.uuid4().hex,
                    account_id=account_id,
                    token_hash="a" * 64,
                    client="browser",
                    user_agent="test",
                    created_at=now,
                    last_seen_at=now,
                    expires_at=now + 3600,
                )
            )
            await conn.execute(
                invitations.insert().values(
                    id=uuid.uuid4().hex,
                    team_id=team_id,
                    code_hash="b" * 64,
                    role="member",
                    created_by=account_id,
                    created_at=now,
                    expires_at=now + 3600,
                    max_uses=1,
                    uses=0,
                    revoked_at=None,
                )
            )
    finally:
        await db.close()


def signed_out(invitation_rows: set[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    """The invitations as they were before ``--sign-out-everyone`` revoked them."""
    revoked_at = [column.name for column in invitations.columns].index("revoked_at")
    assert all(row[revoked_at] is not None for row in invitation_rows)
    return {(*row[:revoked_at], None, *row[revoked_at + 1 :]) for row in invitation_rows}


async def test_a_restore_can_sign_everyone_out(tmp_path: Path) -> None:
    original, archive = tmp_path / "data", tmp_path / "b.crew"
    await seed(original)
    await add_session_and_invitation(original)
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert code == 0, err
    as_backed_up, signed = tmp_path / "as-backed-up", tmp_path / "signed-out"
    code, out, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(as_backed_up), stdin=PASSPHRASE
    )
    assert code == 0, err
    code, out, err = await run(
        "admin",
        "restore",
        str(archive),
        "--data-dir",
        str(signed),
        "--sign-out-everyone",
        stdin=PASSPHRASE,
    )
    assert code == 0, err
    assert "with every session signed out, every open invitation revoked" in out
    then, kept, now = (
        await all_rows(original),
        await all_rows(as_backed_up),
        await all_rows(signed),
    )
    assert kept == then  # without the flag, sessions and invitations come back as they were
    assert (len(then["sessions"]), now["sessions"]) == (1, set())
    assert signed_out(now["invitations"]) == then["invitations"]


async def test_backup_and_restore_failures_are_sentences_not_tracebacks(tmp_path: Path) -> None:
    original, archive = tmp_path / "data", tmp_path / "b.crew"
    await seed(original)
    missing = tmp_path / "no-such-folder" / "b.crew"
    code, _out, err = await run(
        "admin", "backup", "--out", str(missing), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert (code, err) == (
        2,
        f"crewhost: {missing.parent} is not a folder: make it first, or pick another --out\n",
    )
    # A partial file a killed backup left is nobody's: the next backup replaces it.
    partial = tmp_path / ".b.crew.partial"
    partial.write_bytes(b"left by a killed backup")
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert code == 0, err
    assert (archive.is_file(), partial.exists()) == (True, False)

    # An archive that names one file twice is refused, and leaves the target as it was.
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as tar:
        for name, content in (
            ("manifest.json", b'{"format": "crewhost-backup", "database": "sqlite"}'),
            ("files/host/link.json", b"{}"),
            ("files/host/link.json", b"{}"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    plain.seek(0)
    twice = tmp_path / "twice.crew"
    with twice.open("wb") as out_file:
        seal_stream(plain, out_file, PASSPHRASE.decode().strip(), log2_n=10)
    target = tmp_path / "target"
    code, _, err = await run(
        "admin", "restore", str(twice), "--data-dir", str(target), stdin=PASSPHRASE
    )
    assert (code, err) == (
        2,
        "crewhost: the backup holds host/link.json twice: it cannot be trusted\n",
    )
    assert not target.exists()
    assert not [name for name in names_in(tmp_path) if name.startswith(".target")]


async def test_a_refused_restore_touches_nothing(tmp_path: Path) -> None:
    original, archive = tmp_path / "data", tmp_path / "b.crew"
    await seed(original)
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert code == 0, err
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "todo.txt").write_text("shared")
    for path, mode in (
        (home, 0o755),
        (home / "notes", 0o755),
        (home / "notes" / "todo.txt", 0o644),
    ):
        path.chmod(mode)
    before = modes(home)
    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(home), stdin=PASSPHRASE
    )
    assert (code, err) == (
        2,
        f"crewhost: {home} is not empty: restore into a new, empty folder, then point "
        "CREWHOST_DATA_DIR at it\n",
    )
    assert modes(home) == before
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    a_file.chmod(0o644)
    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(a_file), stdin=PASSPHRASE
    )
    assert (code, err) == (
        2,
        f"crewhost: {a_file} is a file, not a folder: restore into a new, empty folder, then "
        "point CREWHOST_DATA_DIR at it\n",
    )
    assert (a_file.read_text(), stat.S_IMODE(a_file.stat().st_mode)) == ("not a folder", 0o644)


async def test_a_restored_postgresql_folder_backs_up_and_restores_again(tmp_path: Path) -> None:
    # The dump a restore leaves in the folder is not copied again beside the new snapshot.
    first, second, third = tmp_path / "data", tmp_path / "restored", tmp_path / "again"
    async with scratch_postgres_database() as url:
        env = {"CREWHOST_DATABASE_URL": url}
        await seed(first, url)
        for source, target in ((first, second), (second, third)):
            archive = tmp_path / f"{source.name}.crew"
            code, _, err = await run(
                "admin",
                "backup",
                "--out",
                str(archive),
                "--data-dir",
                str(source),
                stdin=PASSPHRASE,
                env=env,
            )
            assert code == 0, err
            code, _, err = await run(
                "admin", "restore", str(archive), "--data-dir", str(target), stdin=PASSPHRASE
            )
            assert code == 0, err
        assert names_in(third) == names_in(second)
        assert dump_lines(third) == dump_lines(second)


async def test_a_postgresql_url_in_asyncpgs_form_reaches_pg_dump_whole(tmp_path: Path) -> None:
    """The settings' URL is SQLAlchemy's: a driver, and asyncpg's query (the host, the
    TLS mode). pg_dump is given all of it, and it wins over a stray libpq environment."""
    original, restored, archive = tmp_path / "data", tmp_path / "restored", tmp_path / "b.crew"
    async with scratch_postgres_database() as url, scratch_postgres_database() as fresh:
        await seed(original, url)
        plain = make_url(url)
        query = {"host": plain.host or "", "port": str(plain.port or 5432), "ssl": "disable"}
        in_query = URL.create(
            plain.drivername, plain.username, plain.password, database=plain.database, query=query
        ).render_as_string(False)
        assert in_query.startswith("postgresql+asyncpg://postgres@/")
        env = {
            "CREWHOST_DATABASE_URL": in_query,
            "PGHOST": str(tmp_path / "no-server-here"),
            "PGSSLMODE": "verify-full",
        }
        code, out, err = await run(
            "admin",
            "backup",
            "--out",
            str(archive),
            "--data-dir",
            str(original),
            stdin=PASSPHRASE,
            env=env,
        )
        assert code == 0, err
        assert out.startswith("backed up the postgresql database"), out
        code, _, err = await run(
            "admin", "restore", str(archive), "--data-dir", str(restored), stdin=PASSPHRASE
        )
        assert code == 0, err
        loaded = await asyncio.to_thread(
            subprocess.run,
            [
                "psql",
                "--single-transaction",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-f",
                str(restored / "postgres.sql"),
                make_url(fresh).set(drivername="postgresql").render_as_string(False),
            ],
            capture_output=True,
            check=False,
        )
        assert loaded.returncode == 0, loaded.stderr
        assert await all_rows(restored, fresh) == await all_rows(original, url)


async def test_a_postgresql_url_that_requires_tls_is_not_downgraded(tmp_path: Path) -> None:
    # Against a server without TLS, pg_dump is refused, naming SSL, and never the password.
    async with scratch_postgres_database() as url:
        admin = make_url(url).set(drivername="postgresql").render_as_string(False)
        connection = await asyncpg.connect(admin)
        try:
            tls = await connection.fetchval("SHOW ssl") == "on"
        finally:
            await connection.close()
        secret = "pw-never-shown"
        required = make_url(url).set(password=secret, query={"ssl": "require"})
        dump = tmp_path / "postgres.sql"
        if tls:
            await asyncio.to_thread(backup_module._pg_dump, required.render_as_string(False), dump)
            assert dump.stat().st_size > 0
            return
        with pytest.raises(backup_module.BackupRefused) as refused:
            await asyncio.to_thread(backup_module._pg_dump, required.render_as_string(False), dump)
        assert refused.value.code == "pgDumpFailed"
        assert "SSL" in str(refused.value)
        assert secret not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "environment"),
    [
        (
            "postgresql+asyncpg://crew:p%40ss@db.example:6432/crew?ssl=verify_full",
            {
                "PGHOST": "db.example",
                "PGPORT": "6432",
                "PGUSER": "crew",
                "PGPASSWORD": "p@ss",
                "PGDATABASE": "crew",
                "PGSSLMODE": "verify-full",
            },
        ),
        (
            "postgresql+asyncpg://crew@/crew?host=/var/run/postgresql&prepared_statement_cache_size=0",
            {"PGHOST": "/var/run/postgresql", "PGUSER": "crew", "PGDATABASE": "crew"},
        ),
        (
            "postgresql+asyncpg://crew@/crew?host=a.example:5432&host=[2a01::1]:5433&sslmode=require",
            {
                "PGHOST": "a.example,2a01::1",
                "PGPORT": "5432,5433",
                "PGUSER": "crew",
                "PGDATABASE": "crew",
                "PGSSLMODE": "require",
            },
        ),
    ],
)
def test_a_database_url_becomes_libpqs_environment(url: str, environment: dict[str, str]) -> None:
    assert backup_module._libpq_environment(url) == environment


def test_a_database_url_with_an_unknown_tls_mode_is_refused_without_its_password() -> None:
    with pytest.raises(backup_module.BackupRefused) as refused:
        backup_module._libpq_environment("postgresql+asyncpg://crew:secret@db/crew?ssl=yes")
    assert "ssl='yes'" in str(refused.value)
    assert "secret" not in str(refused.value)


def dump_lines(folder: Path) -> list[bytes]:
    """A restored dump's lines but pg_dump's per-dump random key (``\\restrict KEY``)."""
    lines = (folder / "postgres.sql").read_bytes().splitlines()
    return [line for line in lines if not line.startswith((b"\\restrict", b"\\unrestrict"))]


async def test_a_restore_fills_an_existing_empty_folder_in_place(tmp_path: Path) -> None:
    # A mount point (a container volume) cannot be renamed onto: the folder itself stays.
    original, archive, target = tmp_path / "data", tmp_path / "b.crew", tmp_path / "volume"
    await seed(original)
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(original), stdin=PASSPHRASE
    )
    assert code == 0, err
    target.mkdir(mode=0o755)
    folder = target.stat().st_ino
    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(target), stdin=b"wrong passphrase\n"
    )
    assert code == 2, err
    assert (names_in(target), target.stat().st_ino) == ([], folder)
    # A PostgreSQL URL set for the restore is no matter to a SQLite backup (nothing there
    # answers): the restore says to start without it.
    code, out, err = await run(
        "admin",
        "restore",
        str(archive),
        "--data-dir",
        str(target),
        stdin=PASSPHRASE,
        env={"CREWHOST_DATABASE_URL": "postgresql+asyncpg://nobody@127.0.0.1:9/none"},
    )
    assert code == 0, err
    assert out.startswith(f"restored into {target}")
    assert "with CREWHOST_DATABASE_URL unset" in out
    assert target.stat().st_ino == folder
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert names_in(target) == ["crewhost.db", "host"]
    assert names_in(tmp_path) == ["b.crew", "data", "volume"]
    assert await all_rows(target) == await all_rows(original)


async def test_a_file_removed_while_the_backup_runs_is_left_out_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original, restored = tmp_path / "data", tmp_path / "restored"
    await seed(original)
    settings = settings_of(original)
    scratch = original / "workspace" / "scratch.txt"
    scratch.parent.mkdir(exist_ok=True)
    scratch.write_text("an agent's temporary file")
    listed = backup_module._data_files

    def listed_then_removed(data_dir: Path) -> Iterator[Path]:
        files = list(listed(data_dir))
        scratch.unlink()
        return iter(files)

    monkeypatch.setattr(backup_module, "_data_files", listed_then_removed)
    sealed = io.BytesIO()
    report = backup_module.create_backup(
        original,
        settings.database_url,
        key_ring_file(settings),
        sealed,
        PASSPHRASE.decode().strip(),
    )
    assert report.vanished == 1
    assert report.files == len(list(listed(original)))
    sealed.seek(0)
    backup_module.restore_backup(sealed, PASSPHRASE.decode().strip(), restored)
    assert await all_rows(restored) == await all_rows(original)


async def test_backup_asks_for_its_passphrase_twice_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    original, archive = tmp_path / "data", tmp_path / "b.crew"
    await seed(original)
    typed: list[str] = []
    monkeypatch.setattr(getpass, "getpass", lambda _prompt: typed.pop(0))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(Terminal()))
    # The test process keeps its own logging and SIGTERM handler.
    monkeypatch.setattr(cli, "configure_logging", lambda *_: None)
    monkeypatch.setattr(signal, "signal", lambda *_: None)
    args = ["admin", "backup", "--out", str(archive), "--data-dir", str(original)]

    typed[:] = ["a long backup passphrase", "a long backup passphrasf"]
    assert await asyncio.to_thread(cli.main, args) == 2
    assert capsys.readouterr().err == "crewhost: the passphrases differ\n"
    assert not archive.exists()

    typed[:] = ["a long backup passphrase", "a long backup passphrase"]
    assert await asyncio.to_thread(cli.main, args) == 0
    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(tmp_path / "r"), stdin=PASSPHRASE
    )
    assert code == 0, err


class Terminal(io.BytesIO):
    """Standard input as a terminal: the passphrase is asked, not read."""

    def isatty(self) -> bool:
        return True


async def test_a_restore_unpacks_as_it_reads_and_still_proves_the_archive_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plain archive never lands on disk beside its files (no temporary copy), and an
    archive whose last chunk, past the end of its files, was dropped is still refused."""
    original = tmp_path / "data"
    await seed(original)
    settings = settings_of(original)
    passphrase = PASSPHRASE.decode().strip()
    sealed = io.BytesIO()
    backup_module.create_backup(
        original, settings.database_url, key_ring_file(settings), sealed, passphrase
    )

    def no_temporary_copy(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the restore wrote the plain archive to a temporary file")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_temporary_copy)
    sealed.seek(0)
    backup_module.restore_backup(sealed, passphrase, tmp_path / "restored")
    assert await all_rows(tmp_path / "restored") == await all_rows(original)

    # The same archive sealed again with zeros after it, in a last chunk of their own:
    # without that chunk it ends early, though every file and the manifest are whole.
    sealed.seek(0)
    plain = b"".join(open_stream(sealed, passphrase))
    padded = plain + bytes(-len(plain) % CHUNK_BYTES)
    resealed = io.BytesIO()
    writer = SealingWriter(resealed, passphrase, log2_n=10)
    writer.write(padded)
    writer.write(bytes(10))
    writer.close()
    last_chunk = 4 + 10 + 16  # its length, its zeros, its tag
    cut = io.BytesIO(resealed.getvalue()[:-last_chunk])
    with pytest.raises(ArchiveTampered, match="cut off"):
        backup_module.restore_backup(cut, passphrase, tmp_path / "cut")
    assert not (tmp_path / "cut").exists()
