"""The ``delete_task`` tool: take a task off the thread's list."""

from __future__ import annotations

from typing import Any

from server.host.tools.agents.task_args import TaskRef, tasks_of
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext


async def delete_task(context: ToolContext, args: TaskRef) -> dict[str, Any]:
    tasks_of(context).remove_task(args.task_id)
    return {"deleted": True, "taskId": args.task_id}


TOOL = Tool(
    name="delete_task",
    description="Take a task off this conversation's task list.",
    args=TaskRef,
    gated=False,
    run=delete_task,
)
