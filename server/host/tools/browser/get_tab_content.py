"""The ``get_tab_content`` tool: what a tab shows, as Markdown, for reading rather than acting.

A snapshot lists controls; reading an article or a results table through one costs
many turns. This tool gives the rendered page (or the one element a selector
matches) as Markdown. Headings, landmarks, forms and tables carry a
``<!-- css: ... -->`` line whose selector matches that one element, so the agent
can read a part again or target it. Field values are never shown.
"""

from __future__ import annotations

from typing import Annotated, Any

from playwright.async_api import Page
from pydantic import Field, StringConstraints

from server.host.page.isolated import evaluate_isolated
from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.settle import settle
from server.host.tools.page.snapshots import shown_tab_url, shown_url
from server.host.tools.page.summary import MAX_SUMMARY_INPUT, summarized
from server.host.tools.page.tab_access import holds_secret, reachable_tab
from server.host.tools.results import MAX_RESULT_CHARS, ToolFailure, serialize_result

# Room in a result for the fields around the content, for the most an agent may ask for.
_ENVELOPE = 1_000


MAX_CONTENT_CHARS = MAX_RESULT_CHARS - _ENVELOPE


class GetTabContentArgs(TabArgs):
    selector: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = Field(
        default=None,
        description="A CSS selector matching exactly one element; only that part is read.",
    )
    prompt: Annotated[str, StringConstraints(min_length=1, max_length=4_000)] | None = Field(
        default=None,
        description="What to take from the page; the content is then distilled by the model.",
    )
    max_length: int | None = Field(
        default=None,
        ge=200,
        le=MAX_CONTENT_CHARS,
        description=f"The most characters of Markdown to return (at most {MAX_CONTENT_CHARS}).",
    )


async def get_tab_content(context: ToolContext, args: GetTabContentArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    if holds_secret(tab):
        raise ToolFailure("secretTab", "this tab holds a secret; its content is not read")

    async def read(page: Page) -> dict[str, Any]:
        await settle(page, context.settings)
        title, url = await page.title(), shown_url(page.url)
        room = _content_room(tab.id, url, title, args.selector)
        # A prompt's model reads much more of the page than a result can carry.
        budget = MAX_SUMMARY_INPUT if args.prompt is not None else args.max_length
        room = MAX_SUMMARY_INPUT if args.prompt is not None else room
        found = await evaluate_isolated(
            page, "content", {"selector": args.selector, "budget": budget, "room": room}
        )
        return {"page": found, "url": url, "title": title}

    done = await context.engine.run(context.team_id, tab.id, context.caller, read)
    value = done.value or {}
    found = value.get("page") or {}
    error = found.get("error")
    if error == "invalidSelector":
        raise ToolFailure("invalidSelector", f"{args.selector!r} is not a valid CSS selector")
    if error == "notFound":
        raise ToolFailure("targetNotFound", f"no element matches {args.selector!r}")
    if error == "ambiguous":
        raise ToolFailure(
            "targetAmbiguous",
            f"{found.get('count')} elements match {args.selector!r}; use a selector for one",
        )
    content, truncated = str(found.get("content", "")), bool(found.get("truncated"))
    if args.prompt is not None:
        summary = await summarized(context, args.prompt, content)
        limit = args.max_length or MAX_CONTENT_CHARS
        content, truncated = summary[:limit], truncated or len(summary) > limit
    return _result(
        tab.id,
        str(value.get("url", shown_tab_url(tab))),
        value.get("title", ""),
        args.selector,
        content,
        truncated=truncated,
    )


def _result(
    tab_id: str, url: str, title: str, selector: str | None, content: str, *, truncated: bool
) -> dict[str, Any]:
    return {
        "tabId": tab_id,
        "url": url,
        "title": title,
        "usedSelector": selector,
        "content": content,
        "truncated": truncated,
    }


def _content_room(tab_id: str, url: str, title: str, selector: str | None) -> int:
    """What the Markdown may take, written as JSON, for the whole result to fit the cap
    (the page script keeps to it, so a long page is cut where it crosses, not later)."""
    envelope = _result(tab_id, url, title, selector, "", truncated=False)
    return max(0, MAX_RESULT_CHARS - len(serialize_result(envelope)))


TOOL = Tool(
    name="get_tab_content",
    description=(
        "Read a tab's rendered page as Markdown: headings, text, links, lists and tables, "
        "for reading an article or results rather than acting. `selector` reads one part. "
        "Headings, landmarks, forms and tables are preceded by `<!-- css: ... -->`, a "
        "selector for that element. Field values are not shown. A page longer than the "
        "result allows is cut where it reaches the limit, with `truncated: true`; read the "
        "rest by `selector`. `prompt` has the content distilled to what you ask."
    ),
    args=GetTabContentArgs,
    gated=False,
    run=get_tab_content,
)
