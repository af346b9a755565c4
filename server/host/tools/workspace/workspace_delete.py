"""The ``workspace_delete`` tool: delete a file, or a folder with all in it."""

from __future__ import annotations

from typing import Any

from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.workspace.common import PathArgs, workspace_of


async def workspace_delete(context: ToolContext, args: PathArgs) -> dict[str, Any]:
    workspace, ref = workspace_of(context, args.scope)
    kind = await workspace.delete(ref, args.path)
    return {"deleted": True, "path": args.path.strip("/"), "kind": kind, "scope": args.scope}


TOOL = Tool(
    name="workspace_delete",
    description=(
        "Delete a file of your workspace (scope 'team': the shared one), or a folder with "
        "everything in it."
    ),
    args=PathArgs,
    gated=False,
    run=workspace_delete,
)
