"""The task tools: a list per thread, statuses, refusals, and a ``tasks-changed`` event with
the whole list to who sees the thread at each real change."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from server.common.protocol.events import HostEvent, TasksChanged
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.services.tasks import MAX_TASKS_PER_THREAD, TaskService
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext
from tests.host.tools.conftest import TEAM


class Told:
    def __init__(self) -> None:
        self.events: list[tuple[str, TasksChanged, Callable[[str], bool]]] = []

    def __call__(self, team_id: str, event: HostEvent, only: Callable[[str], bool]) -> None:
        assert isinstance(event, TasksChanged)
        self.events.append((team_id, event, only))


@pytest.fixture
def told() -> Told:
    return Told()


@pytest.fixture
def service(told: Told) -> TaskService:
    return TaskService(told)


def context(
    tmp_path: Path, service: TaskService, thread_id: str, team_id: str = TEAM
) -> ToolContext:
    return ToolContext(
        engine=BrowserEngine(tmp_path),
        team_id=team_id,
        caller=Caller.agent("a" * 32, thread_id),
        tasks=service.for_thread(team_id, thread_id, lambda account: account == "alice"),
    )


async def call(tools: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    return await call_tool(tools, name, args)


async def test_create_update_list_get_delete(
    tmp_path: Path, service: TaskService, told: Told
) -> None:
    tools = context(tmp_path, service, "thread-1")
    first = await call(tools, "create_task", subject="Find prices", description="three shops")
    assert first["task"] == {
        "id": "1",
        "subject": "Find prices",
        "description": "three shops",
        "status": "pending",
    }
    await call(tools, "create_task", subject="Compare")
    updated = await call(tools, "update_task", taskId="1", status="in_progress")
    assert updated["task"]["status"] == "in_progress"
    listed = await call(tools, "list_tasks")
    assert listed["tasks"] == [
        {"id": "1", "subject": "Find prices", "status": "in_progress"},
        {"id": "2", "subject": "Compare", "status": "pending"},
    ]
    await call(tools, "update_task", taskId="1", status="completed", subject="Found prices")
    assert (await call(tools, "get_task", taskId="1"))["task"]["subject"] == "Found prices"
    assert await call(tools, "delete_task", taskId="2") == {"deleted": True, "taskId": "2"}
    assert (await call(tools, "get_task", taskId="2"))["error"]["code"] == "taskNotFound"
    bad = await call(tools, "update_task", taskId="1", status="done")
    assert bad["error"]["code"] == "invalidArguments"
    # One event per real change, each with the whole list, only to who sees the thread.
    assert len(told.events) == 5
    team_id, last, only = told.events[-1]
    assert (team_id, last.thread_id) == (TEAM, "thread-1")
    assert [(t.id, t.status) for t in last.tasks] == [("1", "completed")]
    assert only("alice")
    assert not only("bob")
    await call(tools, "update_task", taskId="1", status="completed")
    assert len(told.events) == 5


async def test_threads_and_teams_keep_their_own_lists(tmp_path: Path, service: TaskService) -> None:
    one = context(tmp_path, service, "thread-1")
    two = context(tmp_path, service, "thread-2")
    elsewhere = context(tmp_path, service, "thread-1", team_id="team-b")
    await call(one, "create_task", subject="Mine")
    assert (await call(two, "list_tasks"))["tasks"] == []
    assert (await call(elsewhere, "list_tasks"))["tasks"] == []
    assert (await call(two, "get_task", taskId="1"))["error"]["code"] == "taskNotFound"
    assert (await call(elsewhere, "delete_task", taskId="1"))["error"]["code"] == "taskNotFound"
    await call(two, "create_task", subject="Theirs")
    assert [t.subject for t in service.tasks_of(TEAM, "thread-1")] == ["Mine"]
    assert [t.subject for t in service.tasks_of(TEAM, "thread-2")] == ["Theirs"]
    service.forget_threads(TEAM, ["thread-1"])
    assert service.tasks_of(TEAM, "thread-1") == []
    assert [t.subject for t in service.tasks_of(TEAM, "thread-2")] == ["Theirs"]


async def test_a_list_has_a_limit(tmp_path: Path, service: TaskService) -> None:
    tools = context(tmp_path, service, "thread-1")
    for n in range(MAX_TASKS_PER_THREAD):
        await call(tools, "create_task", subject=f"Task {n}")
    refused = await call(tools, "create_task", subject="One more")
    assert refused["error"]["code"] == "taskLimit"
    empty = await call(tools, "create_task", subject="   ")
    assert empty["error"]["code"] == "invalidArguments"
