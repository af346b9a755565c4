"""What an agent reads of a fetched page: HTML's main content as Markdown, JSON parsed,
text as it is.

HTML goes through ``trafilatura`` first (main content, no metadata); when it finds
nothing, ``readability-lxml`` picks the article and ``markdownify`` writes it. Both are
CPU work: callers run ``extract`` off the event loop.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from typing import Any

import trafilatura
from lxml.etree import ParserError
from markdownify import markdownify
from readability import Document

from server.common.errors import CrewhostError
from server.common.json_text import read_json

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Codecs Python knows that no page is written in: host-name codecs, and one that always fails.
_NAME_CODECS = frozenset({"idna", "punycode", "undefined"})
# Deeper JSON is given as its text: the parsed value could not be written out again (as the
# tool's result, for the model) without running out of recursion.
MAX_JSON_DEPTH = 100


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
        return body.decode(_text_codec(charset), errors="replace")
    except UnicodeError:  # a codec that cannot replace a bad byte
        return body.decode("utf-8", errors="replace")


def _text_codec(charset: str | None) -> str:
    # A page's charset is whatever its server says: anything but a text codec means UTF-8.
    try:
        codec = codecs.lookup(charset or "utf-8")
    except (LookupError, ValueError):
        return "utf-8"
    if not codec._is_text_encoding or codec.name in _NAME_CODECS:
        return "utf-8"
    return codec.name


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels deep; a walk a
    level at a time, so it never recurses."""
    level = [value] if isinstance(value, (list, dict)) else []
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (list, dict))
        ]
        if not level:
            return False
    return bool(level)


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
            value = read_json(text)
        except (json.JSONDecodeError, RecursionError):
            return Extracted(text, "text")  # a cut, broken or too deep body is still worth reading
        if _nested_deeper_than(value, MAX_JSON_DEPTH):
            return Extracted(text, "text")
        return Extracted(value, "json")
    if content_type.startswith("text/") or content_type in ("application/xml", ""):
        return Extracted(text, "text")
    raise UnsupportedContent(
        f"the address answered {content_type}, which web_fetch does not read "
        "(it reads HTML, JSON and text)"
    )
