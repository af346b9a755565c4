"""What the task tools share: the thread's list, and the shape of a task in a result."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.services.tasks import Task, ThreadTasks
from server.host.tools.args import ToolArgs
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure

Subject = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Description = Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)]
TaskId = Annotated[str, StringConstraints(min_length=1, max_length=20)]


class TaskRef(ToolArgs):
    task_id: TaskId = Field(description="The task's id, from create_task or list_tasks.")


def tasks_of(context: ToolContext) -> ThreadTasks:
    """The calling thread's task list; refused where there is none."""
    if context.tasks is None:
        raise ToolFailure("tasksUnavailable", "there is no task list here")
    return context.tasks


def task_view(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "subject": task.subject,
        "description": task.description,
        "status": task.status,
    }
