"""A local OAuth authorization server speaking the real wire format, for MCP sign-ins.

- ``/.well-known/oauth-authorization-server`` (RFC 8414);
- ``/register``: dynamic client registration (RFC 7591), public clients (``none``); gone
  from the metadata when ``registration`` is off;
- ``/authorize``: the authorization code request; GET answers an HTML login form a person
  fills (user ``ada``, password ``lovelace``), its POST redirects (302) to the client's
  registered ``redirect_uri`` with ``code`` and ``state`` (and ``iss``, RFC 9207, when
  ``iss_supported``);
- ``/token``: ``authorization_code`` (with the PKCE S256 check) and ``refresh_token``
  grants; a confidential client (``add_client``) proves itself with HTTP Basic or
  ``client_secret`` in the form (RFC 6749 2.3.1); refusals as JSON per RFC 6749 5.2
  (``invalid_grant``, ``invalid_client``, …);
- ``/introspect`` (RFC 7662): what the MCP server asks of each bearer token.

The MCP server it guards is ``guarded_notes``. A test sets
``lifetime`` (seconds a token lives), ``refuse_refresh``, ``answer_state`` (a state the
redirect carries instead of the client's), ``iss_supported`` with ``answer_iss`` (another
issuer's name in the answer) or ``omit_iss``, ``registration``, ``hold_token`` (the token
endpoint waits for it), and reads what happened.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import html
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlencode

import uvicorn
from aiohttp import web

from tests.support.fakes.mcp_servers import notes_oauth_server
from tests.support.ports import closed_port, listening
from tests.support.sites import serving

USER, PASSWORD = "ada", "lovelace"
SCOPE = "notes"


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    resource: str | None


@dataclass
class _Token:
    client_id: str
    expires_at: float


@dataclass
class FakeAuthorizationServer:
    """The server's state; ``issuer`` is known once it serves."""

    issuer: str = ""
    lifetime: int = 3600
    refuse_refresh: bool = False
    answer_state: str | None = None
    # RFC 9207: the metadata says answers carry ``iss``, and they do (unless told otherwise).
    iss_supported: bool = False
    answer_iss: str | None = None
    omit_iss: bool = False
    # Dynamic registration offered in the metadata.
    registration: bool = True
    # How clients may prove themselves at the token endpoint, as the metadata lists it.
    auth_methods: tuple[str, ...] = ("none", "client_secret_basic", "client_secret_post")
    # Set by a test: the token endpoint answers once it is set.
    hold_token: asyncio.Event | None = None
    # Set once a token request arrived.
    token_asked: asyncio.Event = field(default_factory=asyncio.Event)
    clients: dict[str, list[str]] = field(default_factory=dict)
    # Confidential clients registered by hand: id → secret.
    client_secrets: dict[str, str] = field(default_factory=dict)
    # How each token request's client proved itself: "basic", "post" or "none".
    client_auth: list[str] = field(default_factory=list)
    codes: dict[str, _Code] = field(default_factory=dict)
    access: dict[str, _Token] = field(default_factory=dict)
    refresh: dict[str, str] = field(default_factory=dict)
    # What was asked: every grant_type at /token, every token introspected.
    grants: list[str] = field(default_factory=list)
    introspected: list[str] = field(default_factory=list)
    authorize_queries: list[dict[str, str]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/.well-known/oauth-authorization-server", self._metadata)
        app.router.add_post("/register", self._register)
        app.router.add_get("/authorize", self._authorize_page)
        app.router.add_post("/authorize", self._authorize)
        app.router.add_post("/token", self._token)
        app.router.add_post("/introspect", self._introspect)
        return app

    def add_client(self, redirect_uri: str, secret: str | None = None) -> str:
        """A client registered by hand (as an admin does on the server's own pages); its id."""
        client_id = f"hand-{secrets.token_hex(4)}"
        self.clients[client_id] = [redirect_uri]
        if secret is not None:
            self.client_secrets[client_id] = secret
        return client_id

    def issued_tokens(self) -> list[str]:
        """Every access and refresh token it gave out."""
        return [*self.access, *self.refresh]

    # -- metadata and registration ---------------------------------------------------------

    async def _metadata(self, _request: web.Request) -> web.Response:
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "introspection_endpoint": f"{self.issuer}/introspect",
            "scopes_supported": [SCOPE],
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": list(self.auth_methods),
            "code_challenge_methods_supported": ["S256"],
        }
        if self.registration:
            document["registration_endpoint"] = f"{self.issuer}/register"
        if self.iss_supported:
            document["authorization_response_iss_parameter_supported"] = True
        return web.json_response(document)

    async def _register(self, request: web.Request) -> web.Response:
        body = await request.json()
        uris = body.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            return _error("invalid_redirect_uri", 400)
        client_id = secrets.token_hex(8)
        self.clients[client_id] = [str(u) for u in uris]
        answer = {
            **body,
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": "none",
        }
        return web.json_response(answer, status=201)

    # -- authorization -------------------------------------------------------------------

    def _check_request(self, query: dict[str, str]) -> str | None:
        if query.get("client_id") not in self.clients:
            return "unknown client"
        if query.get("redirect_uri") not in self.clients[query["client_id"]]:
            return "redirect_uri not registered"
        if query.get("response_type") != "code":
            return "response_type must be code"
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return "PKCE (S256) is required"
        return None

    async def _authorize_page(self, request: web.Request) -> web.Response:
        query = dict(request.query)
        self.authorize_queries.append(query)
        problem = self._check_request(query)
        if problem is not None:
            return web.Response(status=400, text=problem)
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in query.items()
        )
        page = f"""<!doctype html><title>Sign in to notes</title><h1>Sign in to notes</h1>
<form method="post" action="/authorize">{hidden}
<label>User <input id="user" name="user" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password"></label>
<button id="allow" type="submit">Allow</button></form>"""
        return web.Response(text=page, content_type="text/html")

    async def _authorize(self, request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        problem = self._check_request(form)
        if problem is not None:
            return web.Response(status=400, text=problem)
        if form.get("user") != USER or form.get("password") != PASSWORD:
            return web.Response(status=401, text="wrong user or password")
        code = secrets.token_urlsafe(24)
        self.codes[code] = _Code(
            form["client_id"], form["redirect_uri"], form["code_challenge"], form.get("resource")
        )
        state = self.answer_state if self.answer_state is not None else form.get("state", "")
        answer = {"code": code, "state": state}
        if self.answer_iss is not None:
            answer["iss"] = self.answer_iss
        elif self.iss_supported and not self.omit_iss:
            answer["iss"] = self.issuer
        raise web.HTTPFound(f"{form['redirect_uri']}?{urlencode(answer)}")

    # -- tokens --------------------------------------------------------------------------

    async def _token(self, request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        grant = form.get("grant_type", "")
        self.grants.append(grant)
        self.token_asked.set()
        if self.hold_token is not None:
            await self.hold_token.wait()
        client_id = self._client(request, form)
        if client_id is None:
            return _error("invalid_client", 401)
        form["client_id"] = client_id
        if grant == "authorization_code":
            code = self.codes.pop(form.get("code", ""), None)
            if code is None or code.client_id != form["client_id"]:
                return _error("invalid_grant")
            if code.redirect_uri != form.get("redirect_uri"):
                return _error("invalid_grant")
            if _challenge(form.get("code_verifier", "")) != code.challenge:
                return _error("invalid_grant")
            return self._issue(form["client_id"])
        if grant == "refresh_token":
            owner = self.refresh.pop(form.get("refresh_token", ""), None)
            if owner is None or owner != form["client_id"] or self.refuse_refresh:
                return _error("invalid_grant")
            return self._issue(owner)
        return _error("unsupported_grant_type")

    def _client(self, request: web.Request, form: dict[str, str]) -> str | None:
        """The client a token request comes from, once it proved itself; else None."""
        header = request.headers.get("Authorization", "")
        if header.startswith("Basic "):
            pair = base64.b64decode(header[6:]).decode()
            client_id, _, secret = (unquote(part) for part in pair.partition(":"))
            method = "basic"
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
            method = "post" if secret else "none"
        self.client_auth.append(method)
        if client_id not in self.clients:
            return None
        expected = self.client_secrets.get(client_id)
        if expected is not None and not secrets.compare_digest(secret, expected):
            return None
        return client_id

    def _issue(self, client_id: str) -> web.Response:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = _Token(client_id, time.time() + self.lifetime)
        self.refresh[refresh] = client_id
        return web.json_response(
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": self.lifetime,
                "refresh_token": refresh,
                "scope": SCOPE,
            },
            headers={"Cache-Control": "no-store"},
        )

    async def _introspect(self, request: web.Request) -> web.Response:
        token = str((await request.post()).get("token", ""))
        self.introspected.append(token)
        found = self.access.get(token)
        if found is None or found.expires_at < time.time():
            return web.json_response({"active": False})
        answer: dict[str, Any] = {
            "active": True,
            "client_id": found.client_id,
            "scope": SCOPE,
            "exp": int(found.expires_at),
            "token_type": "Bearer",
        }
        return web.json_response(answer)


def _challenge(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _error(code: str, status: int = 400) -> web.Response:
    return web.json_response({"error": code}, status=status, headers={"Cache-Control": "no-store"})


@asynccontextmanager
async def authorization_server() -> AsyncIterator[FakeAuthorizationServer]:
    """The fake on a free loopback port while the block runs."""
    fake = FakeAuthorizationServer()
    async with serving(fake.app()) as site:
        fake.issuer = site.base
        yield fake


class _Uvicorn(uvicorn.Server):
    """uvicorn on the test's own event loop, leaving the test runner its signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@asynccontextmanager
async def guarded_notes(fake: FakeAuthorizationServer) -> AsyncIterator[str]:
    """The notes MCP server that wants ``fake``'s bearer tokens, while the block runs; its
    address. It is the SDK's server served by uvicorn, as it serves itself in a process of
    its own, but on the test's event loop: a process of its own spent more CPU importing
    the SDK than the test spent on the rest."""
    port = closed_port()
    app = notes_oauth_server(port, fake.issuer).streamable_http_app(host="127.0.0.1")
    server = _Uvicorn(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    running = asyncio.create_task(server.serve())
    try:
        await listening(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        # The host's streams to it may still be open: they end with it, unwaited.
        server.should_exit = server.force_exit = True
        await running
