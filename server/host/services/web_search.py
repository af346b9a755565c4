"""How a team's agents search the web: the engine an owner or admin chose, and searching.

DuckDuckGo is the default and needs nothing. SearXNG needs its instance's address;
Brave a key; Google Programmable Search a key and an engine id. A key is sealed by the
secret box before it is written and never comes back out of this service.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import aiohttp

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.errors import InvalidArgument
from server.common.protocol.ids import MAX_SEARCH_ENGINE_ID_LENGTH
from server.common.public_addresses import PublicOnlyPolicy, Resolver, system_resolve
from server.db.engine import Database
from server.db.tables import WEB_SEARCH_API_KEY
from server.host.services.providers import check_key, judged_base_url
from server.host.storage.web_search import WebSearchRepository, WebSearchRow
from server.host.web.dial_policy import policy_session
from server.host.web.search import (
    BRAVE_URL,
    DUCKDUCKGO_URL,
    GOOGLE_URL,
    MAX_RESULTS,
    BraveEngine,
    DuckDuckGoEngine,
    GoogleEngine,
    SearchEngine,
    SearchFailed,
    SearchResult,
    SearxngEngine,
)

log = logging.getLogger(__name__)

ENGINES = ("duckduckgo", "searxng", "brave", "google")
DEFAULT_ENGINE = "duckduckgo"
MAX_ENGINE_ID_LENGTH = MAX_SEARCH_ENGINE_ID_LENGTH


@dataclass(frozen=True)
class SearchEndpoints:
    """Where the hosted engines answer (tests point them at local fakes)."""

    duckduckgo: str = DUCKDUCKGO_URL
    brave: str = BRAVE_URL
    google: str = GOOGLE_URL


@dataclass(frozen=True)
class WebSearchStatus:
    """A team's web search settings as members may see them: never the key."""

    engine: str
    base_url: str | None
    engine_id: str | None
    key_set: bool


@dataclass
class WebSearchService:
    """Reads and changes a team's engine, and searches with it; ``close`` ends the HTTP
    session its engines share."""

    db: Database
    clock: Clock
    box: SecretBox
    endpoints: SearchEndpoints = field(default_factory=SearchEndpoints)
    # Judges the address of a team's SearXNG instance (None: not judged).
    address_policy: PublicOnlyPolicy | None = None
    resolver: Resolver = system_resolve
    _repo: WebSearchRepository = field(default_factory=WebSearchRepository, init=False)
    _session: aiohttp.ClientSession | None = field(default=None, init=False)
    _searxng_session: aiohttp.ClientSession | None = field(default=None, init=False)

    async def close(self) -> None:
        """Close the HTTP sessions of the engines (the host's shutdown)."""
        for session in (self._session, self._searxng_session):
            if session is not None:
                await session.close()
        self._session = self._searxng_session = None

    async def get_settings(self, team_id: str) -> WebSearchStatus:
        return _status(await self._row(team_id))

    async def set_settings(
        self,
        team_id: str,
        engine: str,
        *,
        base_url: str | None = None,
        engine_id: str | None = None,
        key: str | None = None,
        keep_key: bool = False,
    ) -> WebSearchStatus:
        """Choose the team's engine. ``keep_key`` keeps the key already set for the same
        engine; otherwise a key engine needs ``key``. Refuses what the engine lacks."""
        if engine not in ENGINES:
            raise InvalidArgument(f"engine is one of {', '.join(ENGINES)}", field="engine")
        if engine == "searxng":
            if base_url is None:
                raise InvalidArgument("SearXNG needs its instance's address", field="baseUrl")
            base_url = await judged_base_url(
                base_url, "this SearXNG instance", self.address_policy, self.resolver
            )
        else:
            base_url = None
        engine_id = _check_engine_id(engine, engine_id)
        async with self.db.write() as conn:
            existing = await self._repo.get_settings(conn, team_id)
            ciphertext = None
            if engine in ("brave", "google"):
                if key is not None:
                    binding = WEB_SEARCH_API_KEY.binding(team_id, team_id)
                    ciphertext = self.box.encrypt(check_key(key).encode("utf-8"), binding)
                elif keep_key and existing is not None and existing.engine == engine:
                    ciphertext = existing.api_key
                if ciphertext is None:
                    raise InvalidArgument(f"the {engine} engine needs a key", field="key")
            row = WebSearchRow(team_id, engine, base_url, engine_id, ciphertext, self.clock.now())
            await self._repo.update_settings(conn, row)
        log.info("web search engine set", extra={"team_id": team_id, "engine": engine})
        return _status(row)

    async def search(self, team_id: str, query: str, max_results: int) -> list[SearchResult]:
        """Up to ``max_results`` (at most 10) results from the team's engine. A failure
        says where an owner or admin chooses the engine."""
        chosen = await self._chosen(team_id)
        engine = self._engine(chosen or _default(team_id))
        try:
            return await engine.search(query, max(1, min(max_results, MAX_RESULTS)))
        except SearchFailed as failed:
            if failed.code != "searchFailed":
                raise  # a rate limit or a key: its message already says what to do
            raise SearchFailed(f"{failed.message}. {_where_to_choose(chosen)}") from None

    async def engine_for(self, team_id: str) -> SearchEngine:
        return self._engine(await self._row(team_id))

    def _engine(self, row: WebSearchRow) -> SearchEngine:
        if row.engine == "duckduckgo":
            return DuckDuckGoEngine(endpoint=self.endpoints.duckduckgo)
        if row.engine == "searxng":
            # A team's own address: its session judges every name it dials.
            if self._searxng_session is None:
                self._searxng_session = policy_session(self.address_policy, self.resolver)
            return SearxngEngine(self._searxng_session, base_url=row.base_url or "")
        if self._session is None:
            self._session = aiohttp.ClientSession()
        key = self._open(row)
        if row.engine == "brave":
            return BraveEngine(self._session, api_key=key, endpoint=self.endpoints.brave)
        return GoogleEngine(
            self._session, api_key=key, cx=row.engine_id or "", endpoint=self.endpoints.google
        )

    async def _row(self, team_id: str) -> WebSearchRow:
        return await self._chosen(team_id) or _default(team_id)

    async def _chosen(self, team_id: str) -> WebSearchRow | None:
        """The team's settings, or None while it has chosen nothing."""
        async with self.db.read() as conn:
            return await self._repo.get_settings(conn, team_id)

    def _open(self, row: WebSearchRow) -> str:
        if row.api_key is None:
            raise SearchFailed("the search engine has no key; an owner or admin can set one")
        try:
            binding = WEB_SEARCH_API_KEY.binding(row.team_id, row.team_id)
            return self.box.decrypt(row.api_key, binding).decode("utf-8")
        except SecretUnreadable as exc:
            raise SearchFailed(
                f"the search key cannot be decrypted on this host: {exc.reason}; set it again",
                code="searchKeyRefused",
            ) from None


def _default(team_id: str) -> WebSearchRow:
    return WebSearchRow(team_id, DEFAULT_ENGINE, None, None, None, 0.0)


def _where_to_choose(chosen: WebSearchRow | None) -> str:
    where = "on the Web search screen (web-search-v1/set)"
    if chosen is None:
        return (
            "No search engine is chosen for this team, so DuckDuckGo was tried; an owner or "
            f"admin can choose one (SearXNG, Brave or Google) {where}"
        )
    return f"An owner or admin can change the engine or its settings {where}"


def _check_engine_id(engine: str, engine_id: str | None) -> str | None:
    if engine != "google":
        return None
    engine_id = (engine_id or "").strip()
    if not engine_id or len(engine_id) > MAX_ENGINE_ID_LENGTH or not engine_id.isprintable():
        raise InvalidArgument(
            "Google Programmable Search needs its search engine id (cx)", field="engineId"
        )
    return engine_id


def _status(row: WebSearchRow) -> WebSearchStatus:
    return WebSearchStatus(row.engine, row.base_url, row.engine_id, row.api_key is not None)
