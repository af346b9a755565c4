"""What the workspace tools share: which workspace a call means, and file types."""

from __future__ import annotations

import mimetypes
from typing import Literal

from pydantic import Field

from server.host.services.workspace import WorkspaceService
from server.host.tools.args import ToolArgs
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure
from server.host.workspace.paths import MAX_PATH_CHARS
from server.host.workspace.workspaces import WorkspaceRef

Scope = Literal["agent", "team"]

SCOPE_HELP = "'agent' (default): your own workspace; 'team': the one your team shares."


class WorkspaceArgs(ToolArgs):
    scope: Scope = Field(default="agent", description=SCOPE_HELP)


class PathArgs(WorkspaceArgs):
    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_CHARS,
        description="A path inside the workspace, such as notes/prices.md ('/' between folders).",
    )


def workspace_of(context: ToolContext, scope: Scope) -> tuple[WorkspaceService, WorkspaceRef]:
    """The service and the workspace a call means; refused outside an agent's turn."""
    if context.workspace is None:
        raise ToolFailure("workspaceUnavailable", "the workspace is not available here")
    agent_id = context.caller.agent_id
    if agent_id is None:
        raise ToolFailure("agentsOnly", "only an agent has a workspace")
    return context.workspace, WorkspaceRef(context.team_id, agent_id if scope == "agent" else None)


def mime_of(path: str) -> str:
    """The type a file's name gives it; never read from its bytes or from whoever sent it."""
    guessed, _ = mimetypes.guess_type(path, strict=False)
    return guessed or "application/octet-stream"
