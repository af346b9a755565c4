"""The ``list_tasks`` tool: the thread's tasks, briefly."""

from __future__ import annotations

from typing import Any

from server.host.tools.agents.task_args import tasks_of
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext


class ListTasksArgs(ToolArgs):
    """No arguments."""


async def list_tasks(context: ToolContext, _args: ListTasksArgs) -> dict[str, Any]:
    tasks = tasks_of(context).list_tasks()
    return {"tasks": [{"id": t.id, "subject": t.subject, "status": t.status} for t in tasks]}


TOOL = Tool(
    name="list_tasks",
    description="List this conversation's tasks: id, subject and status of each.",
    args=ListTasksArgs,
    gated=False,
    run=list_tasks,
)
