"""The end of a stdio server's process group: a process that still runs keeps it, a zombie
(ended, its status not yet read by whoever adopted it) does not."""

from __future__ import annotations

import os
import subprocess

from server.host.agents.mcp.stdio_transport import _group_lives


def test_a_group_lives_while_a_process_of_it_runs_and_not_as_a_zombie() -> None:
    running = subprocess.Popen(["sleep", "600"], start_new_session=True)  # noqa: S607
    ended = subprocess.Popen(["true"], start_new_session=True)  # noqa: S607
    try:
        assert _group_lives(running.pid)
        # Ended, its status left unread: the kernel keeps it, and signals still reach it.
        os.waitid(os.P_PID, ended.pid, os.WEXITED | os.WNOWAIT)
        os.killpg(ended.pid, 0)
        assert not _group_lives(ended.pid)
    finally:
        running.kill()
        running.wait()
        ended.wait()
    assert not _group_lives(running.pid)
