"""The ``workspace_read`` tool: a text file by lines (200 at most per read), or a binary
one as a data: URL."""

from __future__ import annotations

import asyncio
import base64
import math
from typing import Any, Literal

from pydantic import Field

from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure
from server.host.tools.workspace.common import PathArgs, mime_of, workspace_of

MAX_LINES = 200
# A data: URL longer than this would not fit a result; its size and type are told instead.
MAX_DATA_URL_CHARS = 15_000


class ReadArgs(PathArgs):
    mode: Literal["auto", "text", "blob"] = Field(
        default="auto",
        description="'auto' (default): text for a text file, blob for a binary one; "
        "'text' or 'blob' to choose.",
    )
    offset: int = Field(default=1, ge=1, description="The first line to read (1-based), text only.")
    limit: int = Field(
        default=MAX_LINES,
        ge=1,
        le=MAX_LINES,
        description=f"How many lines to read, text only; at most {MAX_LINES} per read.",
    )


def _text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return None


def _lines(path: str, text: str, offset: int, limit: int) -> dict[str, Any]:
    lines = text.splitlines(keepends=True)
    if offset > max(len(lines), 1):
        raise ToolFailure(
            "workspaceOffsetPastEnd", f"the file has {len(lines)} lines; offset {offset} is past it"
        )
    chosen = lines[offset - 1 : offset - 1 + limit]
    result: dict[str, Any] = {
        "path": path,
        "mode": "text",
        "offset": offset,
        "lines": len(chosen),
        "totalLines": len(lines),
        "content": "".join(chosen),
    }
    end = offset - 1 + len(chosen)
    if end < len(lines):
        result["nextOffset"] = end + 1
        result["note"] = f"the file has more lines: read on with offset {end + 1}"
    return result


def _blob(path: str, data: bytes) -> dict[str, Any]:
    mime = mime_of(path)
    result: dict[str, Any] = {"path": path, "mode": "blob", "mime": mime, "bytes": len(data)}
    prefix = f"data:{mime};base64,"
    if len(prefix) + 4 * math.ceil(len(data) / 3) <= MAX_DATA_URL_CHARS:
        result["dataUrl"] = prefix + base64.b64encode(data).decode()
    else:  # told without encoding it: a file may be megabytes
        result["dataUrl"] = None
        result["note"] = "the file is too large to show as a data: URL"
    return result


def read_answer(path: str, data: bytes, args: ReadArgs) -> dict[str, Any]:
    """The read's result from the file's bytes (decoded and split whole: run off the loop)."""
    if args.mode == "blob":
        return _blob(path, data)
    text = _text(data)
    if text is None:
        if args.mode == "text":
            raise ToolFailure(
                "workspaceNotText", f"{path!r} is not UTF-8 text; read it with mode 'blob'"
            )
        return _blob(path, data)
    return _lines(path, text, args.offset, args.limit)


async def workspace_read(context: ToolContext, args: ReadArgs) -> dict[str, Any]:
    workspace, ref = workspace_of(context, args.scope)
    data = await workspace.read(ref, args.path)
    # A file may be tens of megabytes: its decoding and splitting would hold the loop.
    return await asyncio.to_thread(read_answer, args.path.strip("/"), data, args)


TOOL = Tool(
    name="workspace_read",
    description=(
        "Read a file of your workspace (scope 'team': the shared one). Text comes by lines, "
        f"at most {MAX_LINES} per read: a longer file says `nextOffset` to read on from. "
        "A binary file comes as a data: URL when it is small enough."
    ),
    args=ReadArgs,
    gated=False,
    run=workspace_read,
)
