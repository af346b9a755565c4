"""Commands forked from the test process's forker behave as processes started afresh."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.commands import (
    CREWHOST,
    DEVNULL,
    PEER,
    PIPE,
    run,
    serve_arguments,
    start,
    start_in_background,
)


async def test_a_command_gets_its_arguments_stdin_environment_and_folder(tmp_path: Path) -> None:
    # The environment names the data folder, relative to the folder the command runs in.
    env = {**os.environ, "CREWHOST_DATA_DIR": "from-env"}
    code, out, err = await run(CREWHOST, "admin", "migrate", env=env, cwd=tmp_path)
    assert code == 0, err
    assert (tmp_path / "from-env" / "crewhost.db").is_file()
    assert not (Path.cwd() / "from-env").exists()
    # stdin reaches it: a password read from stdin, refused by a hub that is not there.
    code, out, err = await run(
        PEER,
        "login",
        "--hub",
        "http://127.0.0.1:9",
        "--email",
        "someone@example.com",
        "--password-stdin",
        stdin=b"a password\n",
        env={**os.environ, "CREWHOST_PEER_HOME": str(tmp_path / "peer")},
    )
    assert (code, out) == (1, "")
    assert err.startswith("crewhost-peer: "), err


async def test_usage_errors_exit_2_and_help_exits_0() -> None:
    code, out, err = await run(CREWHOST, "no-such-command")
    assert code == 2
    assert out == ""
    assert err.startswith("usage: crewhost")
    code, out, _ = await run(PEER, "--help")
    assert code == 0
    assert out.startswith("usage: crewhost-peer")


async def test_a_signalled_command_reports_the_signal(tmp_path: Path) -> None:
    process = await start(
        CREWHOST,
        *serve_arguments(tmp_path),
        stdout=PIPE,
        stderr=PIPE,
    )
    assert process.stderr is not None
    assert process.stdout is not None
    # The server is up when it says where it listens; then it is killed without a word.
    while b"hub listening" not in (line := await asyncio.wait_for(process.stderr.readline(), 60)):
        assert line, "serve ended before it listened"
    process.send_signal(signal.SIGKILL)
    assert await asyncio.wait_for(process.wait(), 30) == -signal.SIGKILL
    assert process.returncode == -signal.SIGKILL
    await asyncio.gather(process.stdout.read(), process.stderr.read())


def test_a_background_command_can_lead_its_own_session(tmp_path: Path) -> None:
    with (tmp_path / "out").open("wb") as out:
        process = start_in_background(
            CREWHOST, *serve_arguments(tmp_path), stdout=out, stderr=DEVNULL, new_session=True
        )
    try:
        assert process.poll() is None
        assert os.getsid(process.pid) == process.pid
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(0.01)
    finally:
        process.terminate()
        # A server asked to stop stops (its own exit status for SIGTERM).
        assert process.wait(30) in (0, 143, -signal.SIGTERM)
    assert process.poll() == process.returncode


async def test_a_command_that_cannot_start_says_why(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="could not start: FileNotFoundError"):
        await start(CREWHOST, "--help", cwd=tmp_path / "missing", stdout=DEVNULL)
    # The forker goes on serving the next command.
    assert (await run(CREWHOST, "--help"))[0] == 0
