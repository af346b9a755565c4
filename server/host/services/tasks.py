"""Task lists: what an agent tracks while it works through a thread, in memory only.

Each thread has its own list; nothing crosses between threads or teams. Every change
tells the members who see the thread (``tasks-changed``, with the whole list) so a
client can show progress. A host that restarts starts with empty lists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from server.common.errors import Conflict, NotFound
from server.common.protocol.events import HostEvent, TaskItem, TasksChanged

TaskStatus = Literal["pending", "in_progress", "completed"]
Announce = Callable[[str, HostEvent, Callable[[str], bool]], None]

MAX_TASKS_PER_THREAD = 100


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    subject: str
    description: str | None
    status: TaskStatus = "pending"


@dataclass(eq=False)
class _ThreadList:
    tasks: dict[str, Task] = field(default_factory=dict)
    next_id: int = 1


class ThreadTasks:
    """One thread's task list, as its agent's tools change it."""

    def __init__(
        self,
        service: TaskService,
        team_id: str,
        thread_id: str,
        visible_to: Callable[[str], bool],
    ) -> None:
        self._service = service
        self.team_id = team_id
        self.thread_id = thread_id
        self._visible_to = visible_to

    def _list(self) -> _ThreadList:
        return self._service.list_of(self.team_id, self.thread_id)

    def list_tasks(self) -> list[Task]:
        return list(self._list().tasks.values())

    def get_task(self, task_id: str) -> Task:
        task = self._list().tasks.get(task_id)
        if task is None:
            raise NotFound(f"no task {task_id!r} in this thread", code="taskNotFound")
        return task

    def add_task(self, subject: str, description: str | None) -> Task:
        board = self._list()
        if len(board.tasks) >= MAX_TASKS_PER_THREAD:
            raise Conflict(
                f"a thread keeps at most {MAX_TASKS_PER_THREAD} tasks; delete finished ones",
                code="taskLimit",
            )
        task = Task(str(board.next_id), subject, description)
        board.next_id += 1
        board.tasks[task.id] = task
        self._changed()
        return task

    def update_task(
        self,
        task_id: str,
        *,
        status: TaskStatus | None = None,
        subject: str | None = None,
        description: str | None = None,
    ) -> Task:
        old = self.get_task(task_id)
        new = replace(
            old,
            status=status or old.status,
            subject=subject or old.subject,
            description=description if description is not None else old.description,
        )
        if new != old:
            self._list().tasks[task_id] = new
            self._changed()
        return new

    def remove_task(self, task_id: str) -> None:
        self.get_task(task_id)
        del self._list().tasks[task_id]
        self._changed()

    def _changed(self) -> None:
        items = [
            TaskItem(id=t.id, subject=t.subject, description=t.description, status=t.status)
            for t in self.list_tasks()
        ]
        event = TasksChanged(thread_id=self.thread_id, tasks=items)
        self._service.announce(self.team_id, event, self._visible_to)


class TaskService:
    """Every thread's task list on this host, by team and thread."""

    def __init__(self, announce: Announce) -> None:
        self.announce = announce
        self._lists: dict[tuple[str, str], _ThreadList] = {}

    def for_thread(
        self, team_id: str, thread_id: str, visible_to: Callable[[str], bool]
    ) -> ThreadTasks:
        """The thread's list, telling its changes to whoever ``visible_to`` lets see them."""
        return ThreadTasks(self, team_id, thread_id, visible_to)

    def list_of(self, team_id: str, thread_id: str) -> _ThreadList:
        return self._lists.setdefault((team_id, thread_id), _ThreadList())

    def tasks_of(self, team_id: str, thread_id: str) -> list[Task]:
        """The thread's tasks as they are (for a member reading the thread)."""
        found = self._lists.get((team_id, thread_id))
        return list(found.tasks.values()) if found else []

    def forget_threads(self, team_id: str, thread_ids: list[str]) -> None:
        """Drop the lists of these threads (their agent is being deleted)."""
        for thread_id in thread_ids:
            self._lists.pop((team_id, thread_id), None)
