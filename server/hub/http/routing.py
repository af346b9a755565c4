"""A route table where each route declares its body, its answer and the least access it needs.

The wrapper around a handler does, in order: the CSRF check for browser writes,
authentication, the team-role check, body parsing; only then does the handler
run. Handlers parse nothing and check no role themselves.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

from aiohttp import hdrs, web
from aiohttp.web_protocol import RequestPayloadError
from pydantic import BaseModel, ValidationError

from server.common.errors import (
    Forbidden,
    Internal,
    InvalidArgument,
    NotFound,
    PayloadTooLarge,
    Unauthenticated,
    UnsupportedMediaType,
)
from server.common.protocol.ids import HEX_ID_PATTERN
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel, invalid_argument_from
from server.hub.container import HUB_KEY, Hub
from server.hub.http.cookies import (
    clear_session_cookie,
    read_session_token,
    request_is_secure,
    request_origin,
    set_session_cookie,
)
from server.hub.services.sessions import Principal

CSRF_HEADER = "X-Crewhost-CSRF"
# Set on a request whose body could not be read: its answer closes the connection.
BODY_UNREADABLE = web.RequestKey("body_unreadable", bool)
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_ID = re.compile(HEX_ID_PATTERN)

Access = Literal["public", "account"] | Role
B = TypeVar("B")
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
Reply = WireModel | web.StreamResponse | None
Handler = Callable[["Call[Any]"], Awaitable[Reply]]


@dataclass(frozen=True, slots=True)
class TeamAccess:
    """The team named in the path and the caller's role in it, as of ``as_of``: the hub's
    time before the caller's session and role were read (a removal or sign-out after it
    may not show in them yet)."""

    team_id: str
    role: Role
    as_of: float = 0.0


@dataclass(slots=True)
class Call(Generic[B]):
    """One request, parsed and authorised, as a handler sees it."""

    request: web.Request
    hub: Hub
    body: B
    raw_body: bytes = b""
    principal_or_none: Principal | None = None
    team_or_none: TeamAccess | None = None
    new_session_token: str | None = field(default=None)
    clear_session: bool = False

    @property
    def principal(self) -> Principal:
        if self.principal_or_none is None:
            raise Internal("route declared public but reads the principal")
        return self.principal_or_none

    @property
    def team(self) -> TeamAccess:
        if self.team_or_none is None:
            raise Internal("route is not a team route")
        return self.team_or_none

    def path_id(self, name: str) -> str:
        """An id from the path; a malformed id is simply not found."""
        value = self.request.match_info[name]
        if not _ID.match(value):
            raise NotFound(f"no such {name.removesuffix('_id')}")
        return value

    @property
    def client_address(self) -> str:
        if self.hub.settings.hub.trust_forwarded:
            forwarded = self.request.headers.get("X-Forwarded-For", "")
            last_hop = forwarded.rsplit(",", 1)[-1].strip()
            if last_hop:
                return last_hop
        return self.request.remote or "unknown"

    @property
    def origin(self) -> str:
        return request_origin(self.request, self.hub.settings.hub)

    @property
    def user_agent(self) -> str:
        """The client's own name for itself, as text both databases keep: bytes that are not
        UTF-8 arrive as lone surrogates and are replaced, control characters dropped."""
        sent = self.request.headers.get(hdrs.USER_AGENT, "")[:200]
        text = sent.encode("utf-8", "replace").decode("utf-8")
        return "".join(ch for ch in text if ch.isprintable())


class _NoBody(InboundModel):
    """What a route that takes no body accepts: nothing, or ``{}``."""


@dataclass(frozen=True)
class Route:
    """One HTTP route with everything the router and the OpenAPI document need."""

    method: str
    path: str
    handler: Handler
    access: Access
    body: type[BaseModel] | None
    reply: type[WireModel] | None
    status: int
    summary: str
    raw_body_types: tuple[str, ...] = ()
    raw_body_limit: int = 0
    reply_content_types: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.handler.__name__


class RouteTable:
    """The routes of one module; ``add_to`` mounts them on an application."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def route(
        self,
        method: str,
        path: str,
        *,
        access: Access,
        body: type[BaseModel] | None = None,
        reply: type[WireModel] | None = None,
        status: int = 200,
        raw_body_types: tuple[str, ...] = (),
        raw_body_limit: int = 0,
        reply_content_types: tuple[str, ...] = (),
    ) -> Callable[[F], F]:
        if isinstance(access, Role) and "{team_id}" not in path:
            raise ValueError(f"{path}: a team role needs a {{team_id}} in the path")

        def register(handler: F) -> F:
            doc = (handler.__doc__ or handler.__name__).strip().splitlines()[0]
            self.routes.append(
                Route(
                    method,
                    path,
                    cast(Handler, handler),
                    access,
                    body,
                    reply,
                    status,
                    doc,
                    raw_body_types,
                    raw_body_limit,
                    reply_content_types,
                )
            )
            return handler

        return register

    def get(self, path: str, **kwargs: Any) -> Callable[[F], F]:
        return self.route("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Callable[[F], F]:
        return self.route("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> Callable[[F], F]:
        return self.route("PUT", path, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> Callable[[F], F]:
        return self.route("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Callable[[F], F]:
        return self.route("DELETE", path, **kwargs)


def check_csrf(request: web.Request, hub: Hub) -> None:
    """A browser write must carry the custom header and, if it names one, our Origin.

    A bearer-token request is not a browser's (no page can attach our token
    cross-site), so it is exempt.
    """
    if request.method in _SAFE_METHODS or request.headers.get(hdrs.AUTHORIZATION):
        return
    if request.headers.get(CSRF_HEADER) != "1":
        raise Forbidden(f"missing the {CSRF_HEADER} header", code="csrfRejected")
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is not None and origin != request_origin(request, hub.settings.hub):
        raise Forbidden("the request came from another site", code="csrfRejected")


async def _authenticate(request: web.Request, hub: Hub) -> Principal:
    header = request.headers.get(hdrs.AUTHORIZATION)
    if header is not None:
        scheme, _, bearer = header.partition(" ")
        if scheme.lower() != "bearer" or not bearer.strip():
            raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
        return await hub.sessions.authenticate(bearer.strip())
    cookie = read_session_token(request, request_is_secure(request, hub.settings.hub))
    if cookie is None:
        raise Unauthenticated("sign in first")
    return await hub.sessions.authenticate(cookie)


def _json_media_type(request: web.Request) -> bool:
    return request.content_type == "application/json"


async def _read_raw(request: web.Request) -> bytes:
    """The body as sent, decoded as its ``Content-Encoding`` says; one that does not decode
    (or ends early) is the caller's fault, answered 400 and never a traceback."""
    try:
        return await request.read()
    except RequestPayloadError as exc:
        # The rest of the body cannot be read either: aiohttp must not try to drain it, and
        # the connection closes after the answer (where the next request starts is unknown).
        request.content.feed_eof()
        request[BODY_UNREADABLE] = True
        encoding = request.headers.get(hdrs.CONTENT_ENCODING, "").strip().lower()
        said = f"as {encoding}, as its Content-Encoding says" if encoding else "to its end"
        raise InvalidArgument(f"the body could not be read {said}", code="invalidBody") from exc


async def _read_body(
    request: web.Request, route: Route, hub: Hub
) -> tuple[BaseModel | None, bytes]:
    limit = route.raw_body_limit if route.raw_body_types else hub.settings.hub.max_json_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"the body may be at most {limit} bytes")
    raw = await _read_raw(request)
    if len(raw) > limit:
        raise PayloadTooLarge(f"the body may be at most {limit} bytes")
    if route.raw_body_types:
        if request.content_type not in route.raw_body_types:
            raise UnsupportedMediaType(
                f"send the body as one of: {', '.join(route.raw_body_types)}"
            )
        return None, raw
    if not raw and route.body is None:
        return None, raw
    model = route.body or _NoBody
    if not _json_media_type(request):
        raise UnsupportedMediaType("send the body as application/json")
    try:
        parsed = model.model_validate_json(raw)
    except ValidationError as exc:
        if route.body is None:
            raise InvalidArgument("this route takes no body fields") from exc
        raise invalid_argument_from(exc) from exc
    return (parsed if route.body is not None else None), raw


def wrap(route: Route) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler for a route: guard, parse, call, serialise."""

    async def handle(request: web.Request) -> web.StreamResponse:
        hub = request.app[HUB_KEY]
        check_csrf(request, hub)
        as_of = hub.clock.now()
        principal = None if route.access == "public" else await _authenticate(request, hub)
        team = None
        if isinstance(route.access, Role):
            assert principal is not None
            team_id = request.match_info["team_id"]
            role = (
                await hub.teams.role_of(team_id, principal.account_id)
                if _ID.match(team_id)
                else None
            )
            # A team you are not in does not exist, as far as you can tell.
            if role is None:
                raise NotFound("no such team", code="teamNotFound")
            if not role.at_least(route.access):
                raise Forbidden(f"this needs the {route.access.value} role or higher")
            team = TeamAccess(team_id, role, as_of)
        body, raw = (
            await _read_body(request, route, hub)
            if request.method not in _SAFE_METHODS
            else (None, b"")
        )
        call: Call[Any] = Call(request, hub, body, raw, principal, team)
        result = await route.handler(call)
        response = _respond(result, route.status)
        if call.new_session_token is not None:
            set_session_cookie(
                response,
                request,
                hub.settings.hub,
                call.new_session_token,
                hub.settings.security.session_max_seconds,
            )
        if call.clear_session:
            clear_session_cookie(response, request, hub.settings.hub)
        return response

    return handle


def _respond(result: Reply, status: int) -> web.StreamResponse:
    if isinstance(result, web.StreamResponse):
        return result
    if result is None:
        return web.Response(status=204)
    return web.Response(
        body=result.model_dump_json(), status=status, content_type="application/json"
    )
