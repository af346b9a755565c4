"""How a stdio MCP server's process starts: the launcher sets the limits and becomes the
command (or the sandbox that runs it), and a command the server's PATH does not hold, or
the sandbox does not show, is refused in the host."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

import pytest

from server.host.agents.mcp.child_process import (
    WRITABLE_MEMORY_BYTES,
    child_environment,
    limited_command,
)
from server.host.agents.mcp.sandbox import NOBODY, CommandHidden
from tests.support.fakes.mcp_servers import stdio_sandbox


def test_the_launcher_becomes_the_command_under_the_limits() -> None:
    env = child_environment({})
    script = "ulimit -n; ulimit -t; ulimit -d; ulimit -v; grep NoNewPrivs /proc/self/status"
    run = subprocess.run(  # noqa: S603 - fixed arguments
        limited_command("sh", ("-c", script), env), env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    files, cpu, data_kib, space, label, no_new_privileges = run.stdout.split()
    assert (files, cpu, label, no_new_privileges) == ("256", "3600", "NoNewPrivs:", "1")
    # Writable memory is limited, not the address space a runtime reserves and never uses.
    assert int(data_kib) == WRITABLE_MEMORY_BYTES // 1024
    hosts = resource.getrlimit(resource.RLIMIT_AS)[0]
    assert space == ("unlimited" if hosts == resource.RLIM_INFINITY else str(hosts // 1024))


def test_a_command_not_on_the_servers_path_is_not_found_in_the_host() -> None:
    with pytest.raises(FileNotFoundError):
        limited_command("no-such-mcp-server", (), {"PATH": "/nonexistent"})


def test_in_the_sandbox_the_limits_hold_and_the_command_runs_as_nobody(tmp_path: Path) -> None:
    env = child_environment({})
    script = "ulimit -n; ulimit -t; grep NoNewPrivs /proc/self/status; id -u"
    run = subprocess.run(  # noqa: S603 - fixed arguments
        limited_command("sh", ("-c", script), env, stdio_sandbox(network="none"), tmp_path),
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    files, cpu, label, no_new_privileges, uid = run.stdout.split()
    assert (files, cpu, label, no_new_privileges) == ("256", "3600", "NoNewPrivs:", "1")
    assert int(uid) == NOBODY


def test_a_command_the_sandbox_does_not_show_is_refused_in_the_host(tmp_path: Path) -> None:
    hidden = tmp_path / "bin" / "server"
    hidden.parent.mkdir()
    hidden.write_text("#!/bin/sh\n")
    hidden.chmod(0o755)
    with pytest.raises(CommandHidden):
        limited_command(
            "server", (), {"PATH": str(hidden.parent)}, stdio_sandbox(), tmp_path / "folder"
        )
