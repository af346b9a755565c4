"""The ``workspace_write`` tool: write a text file, or a binary one given as a data: URL."""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import unquote_to_bytes

from pydantic import Field

from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure
from server.host.tools.workspace.common import PathArgs, workspace_of

# data:[<type>][;param=value]*[;base64],<data>
_DATA_URL = re.compile(r"data:(?P<type>[^,;]*)(?P<params>(?:;[^,;]*)*),(?P<data>.*)", re.DOTALL)
# Half of a UTF-16 pair on its own: JSON arguments can carry one, no UTF-8 file can.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class WriteArgs(PathArgs):
    content: str = Field(
        description=(
            "The file's text, or for a binary file a data: URL "
            "(data:image/png;base64,iVBOR...). It replaces the file if there is one."
        )
    )


def content_bytes(content: str) -> bytes:
    """The bytes ``content`` stands for: a data: URL decoded, any other text as UTF-8."""
    if _LONE_SURROGATE.search(content):
        raise ToolFailure(
            "workspaceContentInvalid",
            "the content holds a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot hold",
        )
    found = _DATA_URL.fullmatch(content) if content.startswith("data:") else None
    if found is None:
        return content.encode()
    params = [p.strip().lower() for p in found["params"].split(";") if p.strip()]
    if "base64" in params:
        try:
            return base64.b64decode(re.sub(r"\s", "", found["data"]), validate=True)
        except ValueError:  # binascii.Error, or a character outside ASCII
            raise ToolFailure(
                "workspaceContentInvalid", "the data: URL says base64 but its data is not"
            ) from None
    return unquote_to_bytes(found["data"])


async def workspace_write(context: ToolContext, args: WriteArgs) -> dict[str, Any]:
    workspace, ref = workspace_of(context, args.scope)
    written = await workspace.write(ref, args.path, content_bytes(args.content))
    return {
        "path": written.path,
        "scope": args.scope,
        "bytes": written.size,
        "created": written.created,
    }


TOOL = Tool(
    name="workspace_write",
    description=(
        "Write a file in your workspace (or with scope 'team', your team's shared one): "
        "text as it is, a binary file as a data: URL. Folders on the way are made. The "
        "write is whole or not at all."
    ),
    args=WriteArgs,
    gated=False,
    run=workspace_write,
)
