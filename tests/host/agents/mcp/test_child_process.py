"""How a stdio MCP server's process starts: the launcher sets the limits and becomes the
command, and a command the server's PATH does not hold is refused in the host."""

from __future__ import annotations

import subprocess

import pytest

from server.host.agents.mcp.child_process import child_environment, limited_command


def test_the_launcher_becomes_the_command_under_the_limits() -> None:
    env = child_environment({})
    script = "ulimit -n; ulimit -t; grep NoNewPrivs /proc/self/status"
    run = subprocess.run(  # noqa: S603 - fixed arguments
        limited_command("sh", ("-c", script), env), env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    files, cpu, label, no_new_privileges = run.stdout.split()
    assert (files, cpu, label, no_new_privileges) == ("256", "3600", "NoNewPrivs:", "1")


def test_a_command_not_on_the_servers_path_is_not_found_in_the_host() -> None:
    with pytest.raises(FileNotFoundError):
        limited_command("no-such-mcp-server", (), {"PATH": "/nonexistent"})
