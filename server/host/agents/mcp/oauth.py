"""OAuth for an HTTP MCP server (the MCP authorization flow), with the SDK's wire models:
discovery (protected-resource metadata, RFC 9728, then authorization-server metadata,
RFC 8414), dynamic client registration (RFC 7591) or a client an admin entered, the
authorization code with PKCE (RFC 7636), the answer's issuer checked (RFC 9207), and the
refresh grant (RFC 6749).

Every request goes to an address judged by the host's public-only policy (with
``host.mcp_allowed_hosts``), like the MCP server's own. What a sign-in keeps (the client
registration and the tokens) is a ``Grant``: sealed by the service, never logged.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable, Generator
from dataclasses import asdict, dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urljoin, urlsplit

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    extract_field_from_www_auth,
    extract_scope_from_www_auth,
    issuers_match,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url
from pydantic import ValidationError
from yarl import URL

from server.common.clock import Clock
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
)
from server.host.agents.mcp.http_transport import AnswerTooLarge, HttpDial, pinned_client

# The loopback redirect (RFC 8252): the host reads it in the sign-in tab before any
# request leaves; nothing listens there.
REDIRECT_URI = "http://127.0.0.1:33418/callback"
CLIENT_NAME = "Crewhost"
# A token is refreshed when it has less than this left.
REFRESH_MARGIN_SECONDS = 60.0
# Each request of a sign-in or a refresh, whole: a server that trickles its answer (each
# byte inside the read timeout) is not waited for longer.
STEP_SECONDS = 30.0
_BODY_CHARS = 200


class OAuthFailed(Exception):
    """A step of the flow failed; the message says which and why, for a person (never a
    token). ``code`` is the stable name of the failure."""

    code: str = "mcpSignInFailed"


class ClientNeeded(OAuthFailed):
    """The authorization server registers no clients and the server has none entered."""

    code: str = "mcpSignInNeedsClient"


class IssuerMismatch(OAuthFailed):
    """The authorization answer names another issuer, or none where the server said it
    would (RFC 9207): it may come from another authorization server, so it is refused."""

    code: str = "mcpSignInIssuerMismatch"


@dataclass(frozen=True)
class HandClient:
    """A client an admin registered with the authorization server by hand (for one that
    does not register clients itself): its id, and its secret if it has one."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Grant:
    """What a sign-in keeps for one server: where its authorization server is, the client
    it registered, and its tokens (none until the sign-in ends)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    resource: str
    scope: str | None
    client_id: str
    client_secret: str | None = field(repr=False)
    auth_method: str | None
    access_token: str | None = field(default=None, repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    # Why its tokens were dropped (a refused refresh), said until someone signs in again.
    ended: str | None = None
    # The authorization server said its answers carry ``iss`` (RFC 9207).
    issuer_in_answer: bool = False

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Grant:
        return cls(**json.loads(data))

    def expiring(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at - REFRESH_MARGIN_SECONDS <= now

    def with_tokens(self, token: OAuthToken, now: float) -> Grant:
        return replace(
            self,
            access_token=token.access_token,
            refresh_token=token.refresh_token or self.refresh_token,
            expires_at=None if token.expires_in is None else now + token.expires_in,
            ended=None,
        )


@dataclass(frozen=True)
class Authorization:
    """One authorization request: the address to open, its state and PKCE verifier."""

    url: str
    state: str
    verifier: str


class OAuthClient:
    """The flow's requests, each to an address the policy judged."""

    def __init__(self, policy: PublicOnlyPolicy, resolver: Resolver, clock: Clock) -> None:
        self._policy = policy
        self._resolver = resolver
        self._clock = clock

    async def needs_sign_in(self, server_url: str) -> str | None:
        """Whether the server asks for OAuth: its WWW-Authenticate (or ``""``) when it answers
        401 or its protected-resource metadata names an authorization server; else None."""
        probe = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": CLIENT_NAME, "version": "1"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream"}
        response = await self._send("POST", server_url, json_body=probe, headers=headers)
        if response.status_code == 401:
            return response.headers.get("WWW-Authenticate", "")
        metadata = await self._resource_metadata(server_url, None)
        return "" if metadata is not None and metadata.authorization_servers else None

    async def discover(
        self, server_url: str, www_authenticate: str, client: HandClient | None = None
    ) -> Grant:
        """The authorization server and the client to use with it (no tokens yet): the one
        an admin entered, else one registered now; ``ClientNeeded`` when there is neither."""
        challenge = httpx2.Response(401, headers={"WWW-Authenticate": www_authenticate})
        resource = await self._resource_metadata(
            server_url, extract_field_from_www_auth(challenge, "resource_metadata")
        )
        if resource is not None and not check_resource_allowed(
            _as_resource(server_url), _as_resource(str(resource.resource))
        ):
            # A token for another resource would go to this server with every request.
            raise OAuthFailed(
                f"its metadata names another resource ({_shown(str(resource.resource))}) than "
                f"the server's address"
            )
        issuer = str(resource.authorization_servers[0]) if resource else None
        metadata, said_issuer = await self._server_metadata(issuer, server_url)
        scope = extract_scope_from_www_auth(challenge)
        if scope is None and resource is not None and resource.scopes_supported:
            scope = " ".join(resource.scopes_supported)
        if client is not None:
            client_id, secret = client.client_id, client.client_secret
            auth_method: str | None = _auth_method(metadata, secret)
        else:
            registered = await self._register(metadata, scope)
            client_id, secret = registered.client_id or "", registered.client_secret
            auth_method = registered.token_endpoint_auth_method
        return Grant(
            issuer=said_issuer,
            authorization_endpoint=str(metadata.authorization_endpoint),
            token_endpoint=str(metadata.token_endpoint),
            resource=str(resource.resource) if resource else server_url,
            scope=scope,
            client_id=client_id,
            client_secret=secret,
            auth_method=auth_method,
            issuer_in_answer=metadata.authorization_response_iss_parameter_supported is True,
        )

    def authorization(self, grant: Grant) -> Authorization:
        """The authorization address with a fresh state and PKCE challenge (S256)."""
        verifier = secrets.token_urlsafe(64)[:96]
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        state = secrets.token_urlsafe(32)
        params = {
            "response_type": "code",
            "client_id": grant.client_id,
            "redirect_uri": REDIRECT_URI,
            "state": state,
            "code_challenge": challenge.decode().rstrip("="),
            "code_challenge_method": "S256",
            "resource": grant.resource,
        }
        if grant.scope:
            params["scope"] = grant.scope
        separator = "&" if "?" in grant.authorization_endpoint else "?"
        return Authorization(
            f"{grant.authorization_endpoint}{separator}{urlencode(params)}", state, verifier
        )

    def answered_code(self, grant: Grant, answer_url: str, state: str) -> str:
        """The code of the authorization answer (the redirect's address), once its state is
        this request's and its issuer the one asked (RFC 9207); else ``OAuthFailed``."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(answer_url).query).items() if v}
        if query.get("state") != state:
            raise OAuthFailed("its answer did not carry this sign-in's state, so it was refused")
        iss = query.get("iss")
        if iss is not None and not issuers_match(iss, grant.issuer):
            raise IssuerMismatch(
                f"its answer came from another issuer ({iss[:100]}, not {grant.issuer}), "
                "so it was refused"
            )
        if iss is None and grant.issuer_in_answer:
            raise IssuerMismatch(
                "its answer did not name its issuer although the authorization server says "
                "its answers do, so it was refused"
            )
        if "error" in query:
            raise OAuthFailed(f"the authorization server answered {query['error'][:100]}")
        code = query.get("code")
        if not code:
            raise OAuthFailed("the authorization server gave no code")
        return code

    async def exchange(self, grant: Grant, code: str, verifier: str) -> Grant:
        """Trade the authorization code (with the PKCE verifier) for tokens."""
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
            "resource": grant.resource,
        }
        return await self._token(grant, data, "the code exchange")

    async def refresh(self, grant: Grant) -> Grant:
        """New tokens for the refresh token; raises ``OAuthFailed`` when refused."""
        if not grant.refresh_token:
            raise OAuthFailed("its token expired and it gave no refresh token: sign in again")
        data = {
            "grant_type": "refresh_token",
            "refresh_token": grant.refresh_token,
            "resource": grant.resource,
        }
        return await self._token(grant, data, "the token refresh")

    # -- steps ------------------------------------------------------------------------------

    async def _resource_metadata(
        self, server_url: str, from_header: str | None
    ) -> ProtectedResourceMetadata | None:
        for url in build_protected_resource_metadata_discovery_urls(from_header, server_url):
            response = await self._send("GET", url)
            if response.status_code == 200:
                try:
                    return ProtectedResourceMetadata.model_validate_json(response.content)
                except ValidationError:
                    continue
        return None

    async def _server_metadata(
        self, issuer: str | None, server_url: str
    ) -> tuple[OAuthMetadata, str]:
        """The metadata, and its ``issuer`` as the document spells it (the model's address
        type may add a slash, and an answer's ``iss`` is compared as a string)."""
        for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, server_url):
            response = await self._send("GET", url)
            if response.status_code == 200:
                try:
                    metadata = OAuthMetadata.model_validate_json(response.content)
                except ValidationError:
                    continue
                said = json.loads(response.content).get("issuer")
                return metadata, said if isinstance(said, str) else str(metadata.issuer)
            if response.status_code >= 500:
                break
        raise OAuthFailed("its authorization server's metadata was not found")

    async def _register(
        self, metadata: OAuthMetadata, scope: str | None
    ) -> OAuthClientInformationFull:
        if metadata.registration_endpoint is None:
            raise ClientNeeded(
                "its authorization server does not register clients (no "
                "registration_endpoint): an owner or admin enters the client id (and secret) "
                "registered with it on the server's settings"
            )
        request = OAuthClientMetadata(
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="none",  # noqa: S106 - a public client, with PKCE
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            client_name=CLIENT_NAME,
            scope=scope,
        )
        response = await self._send(
            "POST",
            str(metadata.registration_endpoint),
            json_body=request.model_dump(by_alias=True, mode="json", exclude_none=True),
        )
        if response.status_code not in (200, 201):
            raise OAuthFailed(f"the client registration was refused ({_said(response)})")
        try:
            client = OAuthClientInformationFull.model_validate_json(response.content)
        except ValidationError:
            raise OAuthFailed("the client registration answered something else") from None
        if not client.client_id:
            raise OAuthFailed("the client registration gave no client_id")
        return client

    async def _token(self, grant: Grant, data: dict[str, str], step: str) -> Grant:
        headers: dict[str, str] = {}
        if grant.auth_method == "client_secret_basic" and grant.client_secret:
            # Each part form-encoded first (RFC 6749 2.3.1).
            pair = f"{quote(grant.client_id, safe='')}:{quote(grant.client_secret, safe='')}"
            pair_bytes = pair.encode()
            headers["Authorization"] = f"Basic {base64.b64encode(pair_bytes).decode()}"
        else:
            data = {**data, "client_id": grant.client_id}
            if grant.client_secret:
                data["client_secret"] = grant.client_secret
        response = await self._send("POST", grant.token_endpoint, form=data, headers=headers)
        if response.status_code != 200:
            raise OAuthFailed(f"{step} was refused ({_said(response)})")
        try:
            token = OAuthToken.model_validate_json(response.content)
        except ValidationError:
            raise OAuthFailed(f"{step} answered something else than tokens") from None
        return grant.with_tokens(token, self._clock.now())

    async def _send(
        self,
        method: str,
        url: str,
        *,
        json_body: Any = None,
        form: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx2.Response:
        try:
            client = await pinned_client(
                HttpDial(url, {}, self._policy, self._resolver), None, streams=False
            )
        except NonPublicAddress as refused:
            raise OAuthFailed(f"the address of {_origin(url)} was refused: {refused}") from None
        except NameNotResolved:
            raise OAuthFailed(f"the name of {_origin(url)} was not found") from None
        except ValueError:
            # An address from a server's answer (a port out of range, a broken IPv6 host).
            raise OAuthFailed(f"it named an address that is not valid ({_shown(url)})") from None
        try:
            async with asyncio.timeout(STEP_SECONDS), client:
                return await client.request(method, url, json=json_body, data=form, headers=headers)
        except TimeoutError:
            raise OAuthFailed(f"{_origin(url)} did not answer within {STEP_SECONDS:g} s") from None
        except httpx2.InvalidURL:
            raise OAuthFailed(f"it named an address that is not valid ({_shown(url)})") from None
        except AnswerTooLarge as exc:
            raise OAuthFailed(f"{_origin(url)} answered too much ({exc})") from None
        except httpx2.HTTPError as exc:
            reason = type(exc).__name__
            raise OAuthFailed(f"{_origin(url)} could not be reached ({reason})") from None


def _as_resource(url: str) -> str:
    """``url`` as a resource (RFC 8707: no fragment), its host in IDNA's ASCII form and
    its scheme's default port left out, so that two spellings of one address compare
    equal."""
    parts = URL(resource_url_from_server_url(url))
    port = "" if parts.is_default_port() or parts.explicit_port is None else f":{parts.port}"
    return f"{parts.scheme}://{parts.raw_host or ''}{port}{parts.raw_path}"


def _auth_method(metadata: OAuthMetadata, secret: str | None) -> str:
    """How an entered client proves itself at the token endpoint: not at all without a
    secret; with one, HTTP Basic unless the server takes only the secret in the form
    (RFC 8414: Basic is the default when the server lists none)."""
    if not secret:
        return "none"
    methods = metadata.token_endpoint_auth_methods_supported
    if methods and "client_secret_basic" not in methods and "client_secret_post" in methods:
        return "client_secret_post"
    return "client_secret_basic"


def _origin(url: str) -> str:
    return urljoin(url, "/").rstrip("/")


def _shown(url: str) -> str:
    """An address as a message may show it: cut, and without control characters."""
    return "".join(c if c.isprintable() else "?" for c in url[:100])


def _said(response: httpx2.Response) -> str:
    """An OAuth error answer (RFC 6749 5.2) in words: its status and ``error`` code only."""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        return f"{response.status_code} {error[:_BODY_CHARS]}"
    return str(response.status_code)


BearerSource = Callable[[bool], Awaitable[str]]


class BearerAuth(httpx2.Auth):
    """Adds the signed-in server's access token to each request; the source refreshes it
    when it is about to expire, and once more when the server answers 401."""

    def __init__(self, source: BearerSource) -> None:
        self._source = source

    def sync_auth_flow(
        self, request: httpx2.Request
    ) -> Generator[httpx2.Request, httpx2.Response, None]:
        raise RuntimeError("an MCP session is asynchronous")

    async def async_auth_flow(self, request: httpx2.Request) -> Any:
        request.headers["Authorization"] = f"Bearer {await self._source(False)}"
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = f"Bearer {await self._source(True)}"
            yield request
