"""The ``update_task`` tool: change a task's status, subject or description."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from server.host.tools.agents.task_args import Description, Subject, TaskRef, task_view, tasks_of
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext


class UpdateTaskArgs(TaskRef):
    status: Literal["pending", "in_progress", "completed"] | None = None
    subject: Subject | None = Field(default=None, description="A new title.")
    description: Description | None = Field(default=None, description="A new description.")


async def update_task(context: ToolContext, args: UpdateTaskArgs) -> dict[str, Any]:
    task = tasks_of(context).update_task(
        args.task_id, status=args.status, subject=args.subject, description=args.description
    )
    return {"task": task_view(task)}


TOOL = Tool(
    name="update_task",
    description=(
        "Change a task of this conversation's list: its status (pending, in_progress, "
        "completed), subject or description. Mark a task in_progress when you start it "
        "and completed when it is done."
    ),
    args=UpdateTaskArgs,
    gated=False,
    run=update_task,
)
