"""The ``web_fetch`` tool: an address's content as an agent reads it, outside the browser.

HTTP(S) only, public addresses only (the host may allow listed private hosts), every
redirect hop vetted, 30 s and a download cap. HTML becomes its main content as Markdown,
JSON is parsed, text stays as it is; with ``prompt`` the agent's model distils it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.summary import summarized
from server.host.tools.results import MAX_RESULT_CHARS, ToolFailure
from server.host.web.extract import extract

# Room in a result for the fields around the content.
MAX_CONTENT_CHARS = MAX_RESULT_CHARS - 1_000


class WebFetchArgs(ToolArgs):
    url: Annotated[str, StringConstraints(min_length=1, max_length=8_000)] = Field(
        description="An http or https address."
    )
    prompt: Annotated[str, StringConstraints(min_length=1, max_length=4_000)] | None = Field(
        default=None,
        description="What to take from the page; the content is then distilled by the model.",
    )
    max_length: int | None = Field(
        default=None,
        ge=100,
        le=MAX_CONTENT_CHARS,
        description=f"The most characters of content to return (at most {MAX_CONTENT_CHARS}).",
    )


def cut_text(text: str, limit: int) -> tuple[str, bool]:
    """``text`` within ``limit`` characters, and whether it was cut."""
    return (text, False) if len(text) <= limit else (text[:limit], True)


async def web_fetch(context: ToolContext, args: WebFetchArgs) -> dict[str, Any]:
    if context.web is None:
        raise ToolFailure("webFetchUnavailable", "this host does not fetch web addresses")
    if context.fetch_page is None:
        page = await context.web.fetch(args.url)
    else:
        # Out the way the agent's browser goes: its profile's proxy, never around it.
        page = await context.fetch_page(context.web, args.url)
    found = await asyncio.to_thread(extract, page.body, page.content_type, page.charset, page.url)
    limit = args.max_length or MAX_CONTENT_CHARS
    content: Any = found.content
    truncated = page.cut
    if args.prompt is not None:
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        content, cut = cut_text(await summarized(context, args.prompt, text), limit)
        truncated = truncated or cut
    elif isinstance(content, str):
        content, cut = cut_text(content, limit)
        truncated = truncated or cut
    elif len(serialized := json.dumps(content, ensure_ascii=False, indent=1)) > limit:
        # Parsed JSON too long to give whole: its text, cut, rather than a broken value.
        content, truncated = serialized[:limit], True
    return {
        "url": page.url,
        "final_url": page.final_url,
        "status": page.status,
        "content_type": page.content_type,
        "content": content,
        "truncated": truncated,
    }


TOOL = Tool(
    name="web_fetch",
    description=(
        "Fetch an http(s) address without the browser and read it: an HTML page's main "
        "content as Markdown, JSON parsed, text as it is. Faster than a tab for reading; "
        "it runs no scripts, so use a tab for pages built by JavaScript or behind a "
        "sign-in. `prompt` has the content distilled to what you ask. Only public "
        "addresses can be fetched."
    ),
    args=WebFetchArgs,
    gated=False,
    run=web_fetch,
)
