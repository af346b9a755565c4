"""``crewhost-peer routines`` as a real process: create, list, run, history, delete, and a
bad schedule refused with its code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub

pytestmark = pytest.mark.sqlite_only


async def test_create_list_run_history_and_delete(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    code, out, err = await peer_cli(tmp_path, "call", "agents-v1/create", '{"name": "Reporter"}')
    assert code == 0, err

    code, out, err = await peer_cli(
        tmp_path,
        *("routines", "create", "Reporter", "Orders", "--message", "Count orders."),
        *("--cron", "0 9 * * 1-5", "--tz", "Europe/London"),
    )
    assert code == 0, err
    first, *nexts = out.splitlines()
    assert first.startswith("created ")
    assert first.endswith(": Weekdays at 09:00, Europe/London")
    routine_id = first.split()[1].rstrip(":")
    assert len(nexts) == 3
    assert all(line.startswith("  next: ") and line.endswith("09:00") for line in nexts)

    code, out, err = await peer_cli(tmp_path, "routines", "list", "Reporter")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split() == ["ID", "STATE", "NEXT", "SCHEDULE", "NAME"]
    assert row.startswith(f"{routine_id}  on ")
    assert row.endswith("Weekdays at 09:00, Europe/London  Orders")

    # No provider key: the run starts and its turn ends in error, recorded in the history.
    code, out, err = await peer_cli(tmp_path, "routines", "run", routine_id)
    assert code == 0, err
    assert out.startswith("run ")
    assert out.endswith(": running\n")
    code, out, err = await peer_cli(tmp_path, "routines", "history", routine_id)
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split() == ["RUN", "TRIGGER", "STATUS", "STARTED", "THREAD", "REASON"]
    assert row.split()[1] == "manual"

    code, out, err = await peer_cli(tmp_path, "routines", "delete", routine_id)
    assert (code, out) == (0, "deleted\n"), err
    code, out, _ = await peer_cli(tmp_path, "routines", "list", "Reporter")
    assert out.splitlines()[1:] == []


async def test_bad_schedules_are_refused(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    await peer_cli(tmp_path, "call", "agents-v1/create", '{"name": "Reporter"}')
    create = ("routines", "create", "Reporter", "R", "--message", "Go.")
    code, _, err = await peer_cli(tmp_path, *create, "--every", "30s")
    assert code == 2
    assert "not an interval" in err
    code, _, err = await peer_cli(tmp_path, *create, "--cron", "0 9 * * *", "--tz", "Mars/Base")
    assert code == 1
    assert err.startswith("crewhost-peer: field 'timeZone': unknown time zone")
    assert err.endswith("(invalidSchedule)\n")
    code, _, err = await peer_cli(tmp_path, *create, "--cron", "* * * * * *")
    assert code == 1
    assert err.endswith("(scheduleTooFrequent)\n")
