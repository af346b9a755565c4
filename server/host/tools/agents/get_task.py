"""The ``get_task`` tool: one task of the thread's list, in full."""

from __future__ import annotations

from typing import Any

from server.host.tools.agents.task_args import TaskRef, task_view, tasks_of
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext


async def get_task(context: ToolContext, args: TaskRef) -> dict[str, Any]:
    return {"task": task_view(tasks_of(context).get_task(args.task_id))}


TOOL = Tool(
    name="get_task",
    description="Read one task of this conversation's task list, with its description.",
    args=TaskRef,
    gated=False,
    run=get_task,
)
