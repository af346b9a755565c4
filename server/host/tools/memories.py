"""The ``remember`` tool and the site memories a snapshot shows.

A memory tied to a site (a host without ``www.``) comes back in the first snapshot
of that site, or of a subdomain, in each turn: how a site works is most useful
when the agent is looking at it, and once per turn is enough.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.services.memories import MAX_MEMORY_CHARS, normalize_site, page_site
from server.host.tools.base import Tool, ToolArgs, ToolContext, ToolFailure


async def site_memories_for(
    context: ToolContext, url: str, *, secret: bool = False
) -> list[dict[str, Any]]:
    """Up to five of the agent's memories for the page at ``url``, once per host per turn.

    A tab that holds a secret (``secret``) shows none, and neither does a person's call.
    The host counts as shown for the rest of the turn, so call this for a snapshot that
    goes to the agent.
    """
    agent_id = context.caller.agent_id
    if context.memories is None or agent_id is None or secret:
        return []
    site = page_site(url)
    if site is None or site in context.turn.memory_hosts_shown:
        return []
    context.turn.memory_hosts_shown.add(site)
    found = await context.memories.memories_for_host(context.team_id, agent_id, site)
    return [{"site": memory.site, "text": memory.text} for memory in found]


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
    memory = await context.memories.add_memory(context.team_id, agent_id, args.text, site)
    return {"remembered": True, "id": memory.id, "site": memory.site}


TOOLS = [
    Tool(
        name="remember",
        description=(
            "Keep a short memory for later turns. Give `site` for something about how to "
            "work one website (where a control is, a step that worked after one failed); "
            "it then comes back in `siteMemories` of a snapshot of that site. "
            "Never store passwords, codes or other secrets."
        ),
        args=RememberArgs,
        gated=False,
        run=remember,
    )
]
