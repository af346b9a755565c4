"""A tab's title and icon as the page changes them: the facts the tab list shows.

Each page gets a script in a world of its own (``page-facts.js``) that reports the
document's title and icon address through a CDP binding only that world has, so a title a
single-page app sets after its load reaches the tab list, and the page's scripts cannot
call the binding. The icon is fetched through the browser's own network stack
(``Network.loadNetworkResource``: the tab's proxy, address guard and cache apply, and no
cookies go with it), kept when it is a small image, and listed by a short hash; the bytes
are served on request (``browser-control-v1/tab_icon``), so tab lists stay small.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import json
import logging
from dataclasses import dataclass
from urllib.parse import urlsplit

from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError

from server.host.page.scripts import page_script

log = logging.getLogger(__name__)

WORLD_NAME = "crewhost-facts"
BINDING = "__crewhostPageFacts"
# What a report may carry, and the longest title a tab lists.
MAX_REPORT_CHARS = 4_096
MAX_TITLE_CHARS = 300
# An icon larger than this is not shown (favicons are a few kilobytes).
MAX_ICON_BYTES = 32 * 1024
ICON_TYPES = frozenset(
    {
        "image/png",
        "image/x-icon",
        "image/vnd.microsoft.icon",
        "image/gif",
        "image/jpeg",
        "image/webp",
        "image/svg+xml",
    }
)


@dataclass(frozen=True, slots=True)
class TabIcon:
    """A page's icon: its bytes as a ``data:`` address and the hash a tab list names it by."""

    data_url: str
    digest: str

    @classmethod
    def of(cls, content_type: str, body: bytes) -> TabIcon:
        encoded = base64.b64encode(body).decode("ascii")
        return cls(f"data:{content_type};base64,{encoded}", hashlib.sha256(body).hexdigest()[:16])


@dataclass(frozen=True, slots=True)
class PageFacts:
    """One report of the page: its title and the absolute address of its icon ("" if none)."""

    title: str
    icon_url: str

    @classmethod
    def parse(cls, payload: str, page_url: str) -> PageFacts | None:
        """The report in ``payload``; None for one that is not a report of our script."""
        raw = report_object(payload, MAX_REPORT_CHARS)
        if raw is None:
            return None
        title, icon = raw.get("title"), raw.get("icon")
        if not isinstance(title, str) or not isinstance(icon, str):
            return None
        return cls(" ".join(title.split())[:MAX_TITLE_CHARS], icon or default_icon_url(page_url))


def report_object(payload: object, max_chars: int) -> dict[str, object] | None:
    """A binding's payload as the JSON object our scripts send; None for anything else (a
    binding's caller is not always our script)."""
    if not isinstance(payload, str) or len(payload) > max_chars:
        return None
    try:
        raw = json.loads(payload)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None


def default_icon_url(page_url: str) -> str:
    """Where a browser looks for an icon the page names none of: ``/favicon.ico``."""
    parts = urlsplit(page_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}/favicon.ico"


async def install(session: CDPSession) -> None:
    """Puts the reporting script on every document of the session's page from now on; the
    caller listens for ``Runtime.bindingCalled`` on the session (and keeps it)."""
    source = f"({page_script('page-facts')})({json.dumps(BINDING)})"
    # Sent at once and answered in order (one session's commands run in turn): one wait.
    await asyncio.gather(
        session.send("Page.enable"),
        session.send("Runtime.enable"),
        session.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD_NAME}),
        session.send(
            "Page.addScriptToEvaluateOnNewDocument", {"source": source, "worldName": WORLD_NAME}
        ),
    )


async def fetch_icon(session: CDPSession, url: str) -> TabIcon | None:
    """The icon at ``url``, loaded as the page's main frame would load it; None when it is
    not an http(s) address, fails, is too large or is not an image."""
    if urlsplit(url).scheme not in ("http", "https"):
        return None
    try:
        tree = await session.send("Page.getFrameTree")
        loaded = await session.send(
            "Network.loadNetworkResource",
            {
                "frameId": tree["frameTree"]["frame"]["id"],
                "url": url,
                "options": {"disableCache": False, "includeCredentials": False},
            },
        )
        resource = loaded["resource"]
        stream = resource.get("stream")
        if not resource.get("success") or resource.get("httpStatusCode") != 200 or not stream:
            return None
        try:
            body = await _read(session, stream)
        finally:
            with contextlib.suppress(PlaywrightError):
                await session.send("IO.close", {"handle": stream})
    except (PlaywrightError, KeyError, TypeError):
        return None
    if body is None:
        return None
    headers = {str(k).lower(): str(v) for k, v in (resource.get("headers") or {}).items()}
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type not in ICON_TYPES:
        return None
    return TabIcon.of(content_type, body)


async def _read(session: CDPSession, stream: str) -> bytes | None:
    """The stream's bytes, or None once they pass ``MAX_ICON_BYTES``."""
    body = b""
    while True:
        chunk = await session.send("IO.read", {"handle": stream, "size": MAX_ICON_BYTES})
        data = chunk.get("data", "")
        try:
            body += base64.b64decode(data) if chunk.get("base64Encoded") else data.encode()
        except binascii.Error:
            return None
        if len(body) > MAX_ICON_BYTES:
            return None
        if chunk.get("eof"):
            return body
