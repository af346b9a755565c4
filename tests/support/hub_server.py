"""A real hub on a free loopback port, and HTTP clients that talk to it like real ones."""

from __future__ import annotations

import asyncio
import io
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from server.common.clock import Clock
from server.config import Settings, load_settings
from server.host.start import RunningHost
from server.hub.app import build_app
from server.hub.container import Hub
from server.hub.http.routing import CSRF_HEADER
from server.serve import builtin_host
from tests.support.databases import ScratchDatabase
from tests.support.fakes.mcp_servers import SANDBOX_PATHS
from tests.support.sites import SITE_HOST

PASSWORD = "correct horse battery"

# Cheap hashing keeps a suite of hundreds of sign-ups fast; production keeps the defaults.
FAST_HASHING = {
    "security.password_hash_time_cost": 1,
    "security.password_hash_memory_kib": 1024,
    "security.password_hash_parallelism": 1,
}


def hub_settings(folder: Path, database: ScratchDatabase, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": str(folder),
        "database.url": database.url,
        "host.browser_allowed_hosts": [SITE_HOST],
        # The model providers' and search engines' fakes listen there too.
        "host.provider_allowed_hosts": [SITE_HOST],
        # A memory review asks the provider after turns end: only tests that ask for one
        # get it, so no review takes a reply another test scripted for its turn.
        "host.memory_review_seconds": 3600.0,
        # The fake MCP servers run as stdio commands of the tests' teams, in the sandbox,
        # which shows them the repository and its Python.
        "host.mcp_stdio_teams": ["*"],
        "host.mcp_stdio_paths": list(SANDBOX_PATHS),
    }
    values.update(FAST_HASHING)
    values.update(overrides)
    return load_settings(env={}, overrides=values)


@dataclass
class Reply:
    status: int
    body: Any
    headers: Any
    raw: bytes

    @property
    def code(self) -> str | None:
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return str(self.body["error"]["code"])
        return None


@dataclass
class ApiClient:
    """An HTTP client of the hub: a browser (cookie, CSRF header, Origin) or a peer (bearer)."""

    base: str
    session: aiohttp.ClientSession
    bearer: str | None = None
    csrf: bool = True
    origin: str | None = None
    account_id: str | None = None
    email: str | None = None

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        *,
        data: bytes | str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        sent: dict[str, str] = {}
        if self.bearer is not None:
            sent["Authorization"] = f"Bearer {self.bearer}"
        elif method not in ("GET", "HEAD"):
            if self.csrf:
                sent[CSRF_HEADER] = "1"
            sent["Origin"] = self.origin or self.base
        sent.update(headers or {})
        kwargs: dict[str, Any] = {"headers": sent}
        if json is not None:
            kwargs["json"] = json
        if data is not None:
            # aiohttp warns about large raw bodies; a stream is what it asks for.
            kwargs["data"] = io.BytesIO(data) if isinstance(data, bytes) else data
        async with self.session.request(method, self.base + path, **kwargs) as response:
            raw = await response.read()
            body: Any = None
            if response.content_type == "application/json" and raw:
                body = await response.json()
            return Reply(response.status, body, response.headers, raw)

    async def get(self, path: str, **kwargs: Any) -> Reply:
        return await self.request("GET", path, **kwargs)

    async def post(self, path: str, json: Any = None, **kwargs: Any) -> Reply:
        return await self.request("POST", path, json, **kwargs)

    async def put(self, path: str, json: Any = None, **kwargs: Any) -> Reply:
        return await self.request("PUT", path, json, **kwargs)

    async def patch(self, path: str, json: Any = None, **kwargs: Any) -> Reply:
        return await self.request("PATCH", path, json, **kwargs)

    async def delete(self, path: str, **kwargs: Any) -> Reply:
        return await self.request("DELETE", path, **kwargs)


@dataclass
class RunningHub:
    """A hub serving on loopback, with helpers that make accounts through its API."""

    url: str
    hub: Hub
    host: RunningHost | None = None
    _sessions: list[aiohttp.ClientSession] = field(default_factory=list)

    @property
    def builtin(self) -> RunningHost:
        assert self.host is not None, "started without the built-in host"
        return self.host

    def client(self, **kwargs: Any) -> ApiClient:
        session = aiohttp.ClientSession(
            cookie_jar=aiohttp.CookieJar(unsafe=True),
            # The TLS tests use a throwaway self-signed certificate.
            connector=aiohttp.TCPConnector(ssl=False),
        )
        self._sessions.append(session)
        return ApiClient(self.url, session, **kwargs)

    async def sign_up_owner(
        self, email: str = "owner@example.com", team: str = "Team A"
    ) -> ApiClient:
        """The first owner, through the setup code (only while the hub has no account)."""
        code = await self.hub.setup.issue_code()
        assert code is not None, "the hub has accounts already"
        client = self.client()
        reply = await client.post(
            "/v1/accounts",
            {
                "email": email,
                "name": "Owner",
                "password": PASSWORD,
                "setupCode": code,
                "teamName": team,
            },
        )
        assert reply.status == 201, reply.body
        client.account_id = reply.body["account"]["id"]
        client.email = email
        return client

    async def create_owner(self, email: str, team: str) -> ApiClient:
        """Another team's owner, made as ``crewhost admin create-owner`` does, then signed in."""
        await self.hub.accounts.create_owner(email, "Owner of " + team, PASSWORD, team)
        return await self.sign_in(email)

    async def sign_in(self, email: str, *, client_kind: str = "browser") -> ApiClient:
        client = self.client()
        reply = await client.post(
            "/v1/sessions", {"email": email, "password": PASSWORD, "client": client_kind}
        )
        assert reply.status == 201, reply.body
        if client_kind == "peer":
            client.bearer = reply.body["token"]
        client.account_id = reply.body["account"]["id"]
        client.email = email
        return client

    async def invite(self, inviter: ApiClient, team_id: str, email: str, role: str) -> ApiClient:
        """An invitation from ``inviter`` and a sign-up that accepts it."""
        created = await inviter.post(f"/v1/teams/{team_id}/invitations", {"role": role})
        assert created.status == 201, created.body
        client = self.client()
        reply = await client.post(
            "/v1/accounts",
            {
                "email": email,
                "name": email.split("@")[0],
                "password": PASSWORD,
                "invitationCode": created.body["code"],
            },
        )
        assert reply.status == 201, reply.body
        client.account_id = reply.body["account"]["id"]
        client.email = email
        return client

    async def first_team_id(self, client: ApiClient) -> str:
        reply = await client.get("/v1/teams")
        assert reply.status == 200, reply.body
        return str(reply.body["teams"][0]["id"])

    async def close_clients(self) -> None:
        for session in self._sessions:
            await session.close()


@asynccontextmanager
async def running_hub(
    settings: Settings,
    database: ScratchDatabase,
    *,
    clock: Clock | None = None,
    ssl_context: ssl.SSLContext | None = None,
    with_host: bool = True,
) -> AsyncIterator[RunningHub]:
    """A hub on a free loopback port and, as ``crewhost serve`` has, its built-in host."""
    hub = Hub.build(settings, clock=clock, db=database.open())
    runner = web.AppRunner(build_app(hub))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    await site.start()
    port = runner.addresses[0][1]
    scheme = "https" if ssl_context else "http"
    running = RunningHub(f"{scheme}://127.0.0.1:{port}", hub)
    try:
        if with_host and ssl_context is None:
            async with builtin_host(settings, hub, running.url, clock=clock) as host:
                running.host = host
                # Linking writes to the database; tests start once that is done.
                await asyncio.wait_for(host.link.linked.wait(), 20)
                yield running
        else:
            yield running
    finally:
        await running.close_clients()
        await runner.cleanup()
