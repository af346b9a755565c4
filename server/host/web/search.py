"""Web search engines behind one interface: a query in, ``[{title, url, snippet}]`` out.

SearXNG (its JSON API; the self-hosted choice), DuckDuckGo's HTML results through
``ddgs`` (the default: no key, best effort), the Brave Search API and Google
Programmable Search (both with a key). Each engine turns its service's refusals into
one of three codes: ``searchRateLimited``, ``searchKeyRefused``, ``searchFailed``.
Keys travel only in the request to their service, never in an error.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import aiohttp
from ddgs.engines.duckduckgo import Duckduckgo
from ddgs.exceptions import DDGSException, TimeoutException
from yarl import URL

from server.common.errors import CrewhostError

MAX_RESULTS = 10
SEARCH_TIMEOUT = 15.0
DUCKDUCKGO_URL = "https://html.duckduckgo.com/html/"
BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
GOOGLE_URL = "https://www.googleapis.com/customsearch/v1"
_TAGS = re.compile(r"<[^>]+>")


class SearchFailed(CrewhostError):
    """A search engine could not answer; ``code`` says whether to wait, fix a key, or not."""

    status = 502
    code = "searchFailed"


def rate_limited(engine: str) -> SearchFailed:
    return SearchFailed(
        f"{engine} is limiting searches from this host; try again later or set another engine",
        code="searchRateLimited",
    )


def key_refused(engine: str) -> SearchFailed:
    return SearchFailed(
        f"{engine} refused the search key; an owner or admin can set it again",
        code="searchKeyRefused",
    )


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str

    def to_wire(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url, "snippet": self.snippet}


def plain(text: Any) -> str:
    """A snippet as text: tags such as ``<strong>`` dropped, entities read, spaces folded."""
    return " ".join(html.unescape(_TAGS.sub("", str(text or ""))).split())


def results_from(items: Any, title: str, url: str, snippet: str, limit: int) -> list[SearchResult]:
    """The first ``limit`` items of a JSON list that have a title and a web address."""
    found: list[SearchResult] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        link = str(item.get(url) or "")
        if link.startswith(("http://", "https://")) and item.get(title):
            found.append(SearchResult(plain(item[title]), link, plain(item.get(snippet))))
        if len(found) == limit:
            break
    return found


class SearchEngine(Protocol):
    """One search service."""

    name: ClassVar[str]

    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


@dataclass
class JsonApiEngine:
    """An engine that answers a GET with JSON; subclasses say where and how to read it."""

    session: aiohttp.ClientSession
    name: ClassVar[str] = "search"

    def request(self, query: str, max_results: int) -> tuple[str, dict[str, str], dict[str, str]]:
        """The URL, query parameters and headers of one search."""
        raise NotImplementedError

    def read(self, body: Any, max_results: int) -> list[SearchResult]:
        raise NotImplementedError

    def refusal(self, status: int, body: Any) -> SearchFailed:
        if status == 429:
            return rate_limited(self.name)
        if status in (401, 403):
            return key_refused(self.name)
        return SearchFailed(f"{self.name} answered HTTP {status}")

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        url, params, headers = self.request(query, max_results)
        timeout = aiohttp.ClientTimeout(total=SEARCH_TIMEOUT)
        try:
            async with self.session.get(
                url, params=params, headers=headers, timeout=timeout
            ) as response:
                status, text = response.status, await response.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError) as error:
            raise SearchFailed(
                f"{self.name} could not be reached: {type(error).__name__}"
            ) from None
        try:
            body = json.loads(text)
        except ValueError:
            body = None  # an error page
        if status != 200:
            raise self.refusal(status, body)
        if body is None:
            # A page where JSON belongs (a wrong address, a proxy's page) is not "nothing found".
            raise SearchFailed(f"{self.name} answered with a page that is not JSON")
        return self.read(body, max_results)


@dataclass
class SearxngEngine(JsonApiEngine):
    """A SearXNG instance's JSON API (``format=json`` must be enabled in its settings)."""

    base_url: str = ""
    name: ClassVar[str] = "SearXNG"

    def request(self, query: str, max_results: int) -> tuple[str, dict[str, str], dict[str, str]]:
        url = self.base_url.rstrip("/") + "/search"
        return url, {"q": query, "format": "json"}, {"Accept": "application/json"}

    def read(self, body: Any, max_results: int) -> list[SearchResult]:
        items = body.get("results") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise SearchFailed(
                "the SearXNG address answered JSON without search results; "
                "is it the instance's address?"
            )
        return results_from(items, "title", "url", "content", max_results)

    def refusal(self, status: int, body: Any) -> SearchFailed:
        if status == 403:
            return SearchFailed(
                "the SearXNG instance refused the JSON format; add json to search.formats "
                "in its settings.yml",
                code="searchFailed",
            )
        return super().refusal(status, body)


@dataclass
class BraveEngine(JsonApiEngine):
    """The Brave Search API (``X-Subscription-Token``)."""

    api_key: str = field(default="", repr=False)
    endpoint: str = BRAVE_URL
    name: ClassVar[str] = "Brave Search"

    def request(self, query: str, max_results: int) -> tuple[str, dict[str, str], dict[str, str]]:
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key}
        return self.endpoint, {"q": query, "count": str(max_results)}, headers

    def read(self, body: Any, max_results: int) -> list[SearchResult]:
        web = body.get("web") if isinstance(body, dict) else None
        items = web.get("results") if isinstance(web, dict) else None
        return results_from(items, "title", "url", "description", max_results)

    def refusal(self, status: int, body: Any) -> SearchFailed:
        code = _brave_error_code(body)
        if status == 422 and code in ("SUBSCRIPTION_TOKEN_INVALID", "OPTION_NOT_IN_PLAN"):
            return key_refused(self.name)
        return super().refusal(status, body)


def _brave_error_code(body: Any) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code")) if isinstance(error, dict) else None


@dataclass
class GoogleEngine(JsonApiEngine):
    """Google Programmable Search (Custom Search JSON API): a key and an engine id (cx)."""

    api_key: str = field(default="", repr=False)
    cx: str = ""
    endpoint: str = GOOGLE_URL
    name: ClassVar[str] = "Google Programmable Search"

    def request(self, query: str, max_results: int) -> tuple[str, dict[str, str], dict[str, str]]:
        params = {"key": self.api_key, "cx": self.cx, "q": query, "num": str(max_results)}
        return self.endpoint, params, {"Accept": "application/json"}

    def read(self, body: Any, max_results: int) -> list[SearchResult]:
        items = body.get("items") if isinstance(body, dict) else None
        return results_from(items, "title", "link", "snippet", max_results)

    def refusal(self, status: int, body: Any) -> SearchFailed:
        reasons = _google_reasons(body)
        if status == 429 or reasons & {"rateLimitExceeded", "dailyLimitExceeded"}:
            return rate_limited(self.name)
        if "keyInvalid" in reasons or status == 403:
            return key_refused(self.name)
        return super().refusal(status, body)


def _google_reasons(body: Any) -> set[str]:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("errors") if isinstance(error, dict) else None
    found = {str(d.get("reason")) for d in details or [] if isinstance(d, dict)}
    if isinstance(error, dict) and "API key not valid" in str(error.get("message", "")):
        found.add("keyInvalid")
    return found


class _DuckDuckGoHtml(Duckduckgo):
    """ddgs' DuckDuckGo HTML engine, telling a rate limit from an empty page."""

    def request(self, *args: Any, **kwargs: Any) -> Any:
        try:
            response = self.http_client.request(*args, **kwargs)
        except DDGSException as error:
            raise _Unreachable(_why_unreachable(error.__cause__)) from None
        text = str(response.text or "")
        # DuckDuckGo answers 202 (or a page with its anomaly check) when it limits a client.
        if response.status_code in (202, 403, 429) or "anomaly-modal" in text:
            raise _Limited
        if response.status_code != 200:
            raise DDGSException(f"HTTP {response.status_code}")
        return text


class _Limited(Exception):
    pass


class _Unreachable(Exception):
    """DuckDuckGo could not be reached; the argument says why, in a person's words."""


# The HTTP client's failures by class name, as a person would say them (its own text
# is a resolver's or socket's dump).
_UNREACHABLE = {
    "DNSError": "its name does not resolve from this host (no internet access or no DNS?)",
    "ConnectError": "the connection was refused or cut",
    "ProxyError": "the proxy refused the connection",
    "TlsError": "its certificate was not accepted",
}


def _why_unreachable(cause: BaseException | None) -> str:
    return _UNREACHABLE.get(type(cause).__name__, "the request failed")


def _target(href: str) -> str:
    """A result's own address: DuckDuckGo may wrap it in its ``/l/?uddg=`` redirect."""
    wrapped = URL(href if not href.startswith("//") else "https:" + href)
    if wrapped.host == "duckduckgo.com" and wrapped.path == "/l/" and "uddg" in wrapped.query:
        return wrapped.query["uddg"]
    return href


@dataclass
class DuckDuckGoEngine:
    """DuckDuckGo's HTML results through ``ddgs``: no key, best effort. ``endpoint`` is
    where its HTML form posts (tests point it at a local server)."""

    endpoint: str = DUCKDUCKGO_URL
    name: ClassVar[str] = "DuckDuckGo"

    def _search(self, query: str, max_results: int) -> list[SearchResult]:
        engine = _DuckDuckGoHtml(timeout=int(SEARCH_TIMEOUT))
        engine.search_url = self.endpoint
        found = engine.search(query) or []
        results = [SearchResult(plain(r.title), _target(r.href), plain(r.body)) for r in found]
        return [r for r in results if r.url.startswith(("http://", "https://"))][:max_results]

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        try:
            return await asyncio.to_thread(self._search, query, max_results)
        except _Limited:
            raise rate_limited(self.name) from None
        except _Unreachable as why:
            raise SearchFailed(f"{self.name} could not be reached: {why}") from None
        except TimeoutException:
            raise SearchFailed(f"{self.name} did not answer in time") from None
        except DDGSException as error:
            raise SearchFailed(f"{self.name} could not be searched: {error}") from None


ENGINE_KINDS: Mapping[str, str] = {
    "duckduckgo": DuckDuckGoEngine.name,
    "searxng": SearxngEngine.name,
    "brave": BraveEngine.name,
    "google": GoogleEngine.name,
}
