"""The ``workspace_list`` tool: the files and folders of one workspace folder."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.workspace.common import WorkspaceArgs, workspace_of
from server.host.workspace.paths import MAX_PATH_CHARS


class ListArgs(WorkspaceArgs):
    path: str = Field(
        default="", max_length=MAX_PATH_CHARS, description="A folder; empty: the top."
    )


async def workspace_list(context: ToolContext, args: ListArgs) -> dict[str, Any]:
    workspace, ref = workspace_of(context, args.scope)
    entries = await workspace.list_folder(ref, args.path)
    usage = await workspace.usage(ref)
    return {
        "path": args.path.strip("/"),
        "scope": args.scope,
        "entries": [
            {"name": e.name, "kind": e.kind, **({"bytes": e.size} if e.kind == "file" else {})}
            for e in entries
        ],
        "workspaceFiles": usage.files,
        "workspaceBytes": usage.bytes,
    }


TOOL = Tool(
    name="workspace_list",
    description=(
        "List a folder of your workspace (scope 'team': the shared one): its files with "
        "their sizes, and its folders."
    ),
    args=ListArgs,
    gated=False,
    run=workspace_list,
)
