"""The ``create_task`` tool: add a task to the thread's list (status ``pending``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.agents.task_args import Description, Subject, task_view, tasks_of
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext


class CreateTaskArgs(ToolArgs):
    subject: Subject = Field(description="A short title for the task.")
    description: Description | None = Field(default=None, description="What it involves.")


async def create_task(context: ToolContext, args: CreateTaskArgs) -> dict[str, Any]:
    task = tasks_of(context).add_task(args.subject, args.description or None)
    return {"task": task_view(task)}


TOOL = Tool(
    name="create_task",
    description=(
        "Add a task to this conversation's task list, to track your progress through a "
        "task of many steps. The people in the conversation see the list."
    ),
    args=CreateTaskArgs,
    gated=False,
    run=create_task,
)
