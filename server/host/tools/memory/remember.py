"""The ``remember`` tool: a note for later turns, about a site or in general.

A site note comes back in snapshots of that site (see ``page.site_memories``); a general
one in the system prompt of later turns. In a private thread it is its member's alone.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.services.memories import MAX_MEMORY_CHARS, MemorySource, normalize_site
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure


class RememberArgs(ToolArgs):
    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MEMORY_CHARS)
    ] = Field(description="What to remember, in a sentence or two.")
    site: Annotated[str, StringConstraints(max_length=2048)] | None = Field(
        default=None,
        description=(
            "A host (example.com) or an address on it, when the memory is about how to "
            "work that site. It is then shown on that site's pages."
        ),
    )


async def remember(context: ToolContext, args: RememberArgs) -> dict[str, Any]:
    agent_id = context.caller.agent_id
    if agent_id is None:
        raise ToolFailure("agentsOnly", "only an agent keeps memories")
    if context.memories is None:
        raise ToolFailure("memoriesUnavailable", "memories are not available here")
    site = normalize_site(args.site) if args.site is not None else None
    thread_id = context.caller.thread_id
    memory = await context.memories.add_memory(
        context.team_id,
        agent_id,
        args.text,
        site,
        member_id=context.memory_member,
        source=MemorySource(threads=(thread_id,) if thread_id else (), turn_id=context.turn_id),
    )
    return {"remembered": True, "id": memory.id, "site": memory.site}


TOOL = Tool(
    name="remember",
    description=(
        "Keep a short memory for later turns. Give `site` for something about how to "
        "work one website (where a control is, a step that worked after one failed); "
        "it then comes back in `siteMemories` of a snapshot of that site; without `site` "
        "it is in your instructions' memories in later turns. "
        "Never store passwords, codes or other secrets."
    ),
    args=RememberArgs,
    gated=False,
    run=remember,
)
