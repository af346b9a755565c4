"""The ``web_search`` tool: results from the search engine the team chose."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure
from server.host.web.search import MAX_RESULTS


class WebSearchArgs(ToolArgs):
    query: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
    max_results: int = Field(
        default=5, ge=1, le=MAX_RESULTS, description=f"How many results (at most {MAX_RESULTS})."
    )


async def web_search(context: ToolContext, args: WebSearchArgs) -> dict[str, Any]:
    if context.search is None:
        raise ToolFailure("webSearchUnavailable", "web search is not available on this host")
    results = await context.search(args.query, args.max_results)
    return {"query": args.query, "results": [result.to_wire() for result in results]}


TOOL = Tool(
    name="web_search",
    description=(
        "Search the web with the engine your team chose. Returns up to `maxResults` "
        "(default 5, at most 10) results, each {title, url, snippet}. Read a result with "
        "web_fetch, or open it in a tab to act on it."
    ),
    args=WebSearchArgs,
    gated=False,
    run=web_search,
)
