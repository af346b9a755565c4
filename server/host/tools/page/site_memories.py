"""The agent's memories of a site, as the first snapshot of that site in a turn shows them.

A memory tied to a site (a host without ``www.``) comes back in the first snapshot
of that site, or of a subdomain, in each turn: how a site works is most useful
when the agent is looking at it, and once per turn is enough.
"""

from __future__ import annotations

from typing import Any

from server.common.redaction import redact
from server.host.services.memories import page_site
from server.host.tools.context import ToolContext


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
    found = await context.memories.memories_for_host(
        context.team_id, agent_id, site, member_id=context.memory_member
    )
    # Blanked again on the way out: memories kept before a rule was added.
    return [{"site": memory.site, "text": redact(memory.text)} for memory in found]
