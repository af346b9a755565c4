"""A tool's ``prompt``: the calling agent's model distils what the tool read."""

from __future__ import annotations

from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure

# The most of a page the model is given to distil: enough for a long article.
MAX_SUMMARY_INPUT = 200_000


async def summarized(context: ToolContext, prompt: str, content: str) -> str:
    """``content`` distilled as ``prompt`` asks; refused when the turn has no model."""
    if context.summarize is None:
        raise ToolFailure(
            "summaryUnavailable",
            "no model is available to follow a prompt here; call again without `prompt`",
        )
    return await context.summarize(prompt, content[:MAX_SUMMARY_INPUT])
