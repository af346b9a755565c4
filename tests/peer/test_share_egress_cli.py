"""``crewhost-peer share-egress`` as a real process: the computer shows online while it
runs and offline once Ctrl+C stops it; a member (not an admin) is refused."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.peer.test_cli import login, peer_cli
from tests.support.commands import ROOT
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.hub_server import PASSWORD, RunningHub
from tests.support.peers import peer_member, wait_linked
from tests.support.waiting import eventually


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """The CLI is about the terminal; proxies' storage is tested on both backends elsewhere."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


# The CLI as a terminal's foreground job runs it: Ctrl+C's signal handled as by default,
# whatever this test process inherited (a job started in the background by a
# non-interactive shell has SIGINT ignored, and a child keeps that).
AS_A_TERMINAL_RUNS_IT = (
    "import runpy, signal, sys; "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "sys.argv = ['crewhost-peer', *sys.argv[1:]]; "
    "runpy.run_module('peer.cli', run_name='__main__', alter_sys=True)"
)


async def test_share_egress_runs_until_ctrl_c(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    home = tmp_path / "peer"
    code, _, err = await login(home, server)
    assert code == 0, err
    await wait_linked(server)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        AS_A_TERMINAL_RUNS_IT,
        "share-egress",
        "--label",
        "desk",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "CREWHOST_PEER_HOME": str(home), "PYTHONFAULTHANDLER": "1"},
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 30)
    assert line.decode().startswith("sharing this computer as computer: desk")
    egress = server.builtin.services.egress
    member = await peer_member(server, "owner@example.com", tmp_path)
    await eventually(lambda: egress.online(member.team_id, member.account_id))
    process.send_signal(signal.SIGINT)
    # Both pipes are read to the end: a child blocked on a full pipe would never exit.
    exited = asyncio.ensure_future(process.communicate())
    try:
        _rest, stderr = await asyncio.wait_for(asyncio.shield(exited), 30)
    except TimeoutError:
        status = await asyncio.to_thread(Path(f"/proc/{process.pid}/status").read_text)
        signals = [line for line in status.splitlines() if line.startswith("Sig")]
        process.send_signal(signal.SIGABRT)  # with PYTHONFAULTHANDLER: every thread's stack
        _rest, stderr = await exited
        raise AssertionError(
            f"share-egress did not stop on Ctrl+C ({signals}):\n{stderr.decode()}"
        ) from None
    assert process.returncode == 130, stderr.decode()
    assert b"Traceback" not in stderr, stderr.decode()
    await eventually(lambda: not egress.online(member.team_id, member.account_id))
    await member.hub.close()


async def test_a_member_may_not_share(server: RunningHub, tmp_path: Path) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "member@example.com", "member")
    await wait_linked(server)
    home = tmp_path / "member"
    code, _, err = await peer_cli(
        home,
        "login",
        "--hub",
        server.url,
        "--email",
        "member@example.com",
        "--password-stdin",
        stdin=PASSWORD.encode() + b"\n",
    )
    assert code == 0, err
    code, _, err = await peer_cli(home, "share-egress")
    assert code == 1
    assert "(forbidden)" in err
