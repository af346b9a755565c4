"""What an agent reads of a fetched page: HTML's main content as Markdown, JSON parsed,
text as it is.

HTML goes through ``trafilatura`` first (main content, no metadata); when it finds
nothing, ``readability-lxml`` picks the article and ``markdownify`` writes it. Both are
CPU work: callers run ``extract`` off the event loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import trafilatura
from lxml.etree import ParserError
from markdownify import markdownify
from readability import Document

from server.common.errors import CrewhostError

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class UnsupportedContent(CrewhostError):
    """The response is neither HTML, JSON nor text."""

    status = 415
    code = "unsupportedContent"


@dataclass(frozen=True)
class Extracted:
    """The readable content: Markdown or text (a ``str``), or a parsed JSON value."""

    content: Any
    kind: str


def is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


def decode(body: bytes, charset: str | None) -> str:
    """``body`` as text in its declared charset, else UTF-8, never failing on a bad byte."""
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def html_to_markdown(html: str, url: str | None = None) -> str:
    """The main content of an HTML page as Markdown ("" when a page has no text)."""
    found = trafilatura.extract(
        html,
        url=url,
        output_format="markdown",
        with_metadata=False,
        include_links=True,
        include_tables=True,
        include_comments=False,
        favor_recall=True,
        # Its own fallback extractors double the time; ours (readability) runs only when
        # trafilatura finds nothing.
        fast=True,
    )
    if found and found.strip():
        return str(found).strip()
    return _readability_markdown(html)


def _readability_markdown(html: str) -> str:
    try:
        article = Document(html).summary(html_partial=True)
    except (ParserError, ValueError):
        return ""
    text: str = markdownify(article, heading_style="ATX", strip=["img", "script", "style"])
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def extract(body: bytes, content_type: str, charset: str | None, url: str) -> Extracted:
    """The readable content of a response; raises ``UnsupportedContent`` for other types."""
    if content_type in HTML_TYPES:
        return Extracted(html_to_markdown(decode(body, charset), url), "html")
    text = decode(body, charset)
    if is_json(content_type):
        try:
            return Extracted(json.loads(text), "json")
        except json.JSONDecodeError:
            return Extracted(text, "text")  # a cut or broken body is still worth reading
    if content_type.startswith("text/") or content_type in ("application/xml", ""):
        return Extracted(text, "text")
    raise UnsupportedContent(
        f"the address answered {content_type}, which web_fetch does not read "
        "(it reads HTML, JSON and text)"
    )
