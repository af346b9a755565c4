"""Backups and restores stopped half-way (SIGTERM, SIGKILL) leave no plain copy anywhere,
and the next one runs."""

from __future__ import annotations

import asyncio
import os
import signal
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from server.ops.backup import PAUSE_HOOK, RESTORING, STAGING
from tests.ops.test_backup import PASSPHRASE, names_in, seed
from tests.support import commands
from tests.support.commands import CREWHOST, PIPE, Forked
from tests.support.serving import FAST_ENV, run

pytestmark = pytest.mark.timeout(300)


def everything_under(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@asynccontextmanager
async def paused(*args: str, env: dict[str, str]) -> AsyncIterator[Forked]:
    """A ``crewhost`` command stopped at its pause point: it says so through a FIFO."""
    fifo = Path(env["TMPDIR"]).parent / f"pause-{os.urandom(4).hex()}"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if os.read(reader, 64) and not ready.done():
            ready.set_result(None)

    loop.add_reader(reader, readable)
    process = await commands.start(
        CREWHOST,
        *args,
        stdin=PIPE,
        stdout=PIPE,
        stderr=PIPE,
        env={**os.environ, **FAST_ENV, **env, PAUSE_HOOK: str(fifo)},
    )
    assert process.stdin is not None
    process.stdin.write(PASSPHRASE)
    process.stdin.close()
    ended = asyncio.ensure_future(process.wait())
    try:
        either: set[asyncio.Future[Any]] = {ready, ended}
        await asyncio.wait(either, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        assert ready.done(), "the command ended (or hung) before its pause point"
        yield process
    finally:
        loop.remove_reader(reader)
        os.close(reader)
        fifo.unlink()
        if process.returncode is None:
            process.kill()
        await ended
        await process.communicate()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
async def test_a_stopped_backup_leaves_nothing_plain_and_the_next_one_runs(
    tmp_path: Path, stop: signal.Signals
) -> None:
    data, archive, temp = tmp_path / "data", tmp_path / "out" / "b.crew", tmp_path / "tmp"
    archive.parent.mkdir()
    temp.mkdir()
    await seed(data)
    env = {"TMPDIR": str(temp)}
    args = ("admin", "backup", "--out", str(archive), "--data-dir", str(data))
    partial = archive.with_name(".b.crew.partial")
    async with paused(*args, env=env) as backup:
        # Its database snapshot is staged inside the data folder, privately; nothing in TMPDIR.
        staged = list((data / STAGING).iterdir())
        assert len(staged) == 1
        assert (staged[0] / "crewhost.db").is_file()
        assert everything_under(temp) == []
        assert partial.is_file()
        # Another backup to the same file leaves the running one's file alone.
        code, _, err = await run(*args, stdin=PASSPHRASE, env=env)
        assert (code, err) == (
            2,
            f"crewhost: another backup is writing {partial}: wait for it to end\n",
        )
        assert partial.is_file()
        backup.send_signal(stop)
        assert await asyncio.wait_for(backup.wait(), 30) == (143 if stop is signal.SIGTERM else -9)
    assert everything_under(temp) == []
    assert not archive.exists()
    if stop is signal.SIGTERM:
        assert not partial.exists()
        assert not (data / STAGING).exists()
    else:
        # What SIGKILL leaves is sealed (the partial) or private inside the data folder.
        assert b"SQLite format 3" not in partial.read_bytes()
        assert (data / STAGING).exists()
    code, out, err = await run(*args, stdin=PASSPHRASE, env=env)
    assert code == 0, err
    assert "backed up the sqlite database" in out
    assert not partial.exists()
    assert not (data / STAGING).exists()
    assert everything_under(temp) == []
    restored = tmp_path / "restored"
    code, _, err = await run(
        "admin", "restore", str(archive), "--data-dir", str(restored), stdin=PASSPHRASE
    )
    assert code == 0, err
    assert not (restored / STAGING).exists()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
async def test_a_stopped_restore_leaves_its_target_empty_and_the_next_one_runs(
    tmp_path: Path, stop: signal.Signals
) -> None:
    data, archive, temp = tmp_path / "data", tmp_path / "b.crew", tmp_path / "tmp"
    temp.mkdir()
    await seed(data)
    code, _, err = await run(
        "admin", "backup", "--out", str(archive), "--data-dir", str(data), stdin=PASSPHRASE
    )
    assert code == 0, err
    target = tmp_path / "restored"
    target.mkdir(mode=0o700)
    args = ("admin", "restore", str(archive), "--data-dir", str(target))
    async with paused(*args, env={"TMPDIR": str(temp)}) as restore:
        # Unpacked into a private folder inside the (empty) target, nothing beside it.
        assert names_in(target) == [RESTORING]
        assert stat.S_IMODE((target / RESTORING).stat().st_mode) == 0o700
        restore.send_signal(stop)
        await asyncio.wait_for(restore.wait(), 30)
    assert names_in(target) == ([] if stop is signal.SIGTERM else [RESTORING])
    assert everything_under(temp) == []
    code, _, err = await run(*args, stdin=PASSPHRASE)
    assert code == 0, err
    assert (target / "crewhost.db").is_file()
    assert names_in(tmp_path) == ["b.crew", "data", "restored", "tmp"]
