"""The ``team-api`` data channel: a route table with least roles, and one session per peer.

A request is ``{id, route, args}``; the answer ``{id, result}`` or ``{id, error}``.
Every refusal (too large, malformed, unknown route, bad args, too fast, role too
low) is an answer with a code; the channel stays open. Each request runs in a
task of its own, so a slow handler delays neither the peer's other requests nor
any other peer. The rate and in-flight limits are per member of a team, shared by
all of the member's peers, so opening more peers buys no more throughput.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, get_type_hints

from pydantic import BaseModel, ValidationError

from server.common.clock import Clock
from server.common.errors import (
    CrewhostError,
    Forbidden,
    Internal,
    NotFound,
    PayloadTooLarge,
    RateLimited,
)
from server.common.protocol.codec import PROTOCOL_VERSION, encode, error_info, utf8_size
from server.common.protocol.events import HostEvent
from server.common.protocol.team_api import (
    MAX_TEAM_API_MESSAGE,
    TeamApiError,
    TeamApiRequest,
    TeamApiResult,
    decode_team_api_request,
    request_id_of,
)
from server.common.ratelimit import TokenBuckets
from server.common.roles import Role
from server.common.tasks import BackgroundTasks
from server.common.wire import InboundModel, WireModel, invalid_argument_from
from server.config import RtcSettings
from server.host.metrics import HostMetrics

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


@dataclass(frozen=True, slots=True)
class PeerIdentity:
    """Who is on the other end of a peer connection, from the ticket the hub signed."""

    peer_id: str
    account_id: str
    team_id: str
    role: Role
    session_hash: str


@dataclass(frozen=True)
class HostRoute:
    name: str
    args: type[InboundModel]
    least_role: Role
    # Called with the session's call context (the host's ``HostCall``) and the parsed args.
    handler: Callable[[Any, Any], Awaitable[Any]]
    summary: str
    result: type[WireModel]


class HostRouteTable:
    """The routes of one capability; ``capability`` names it in ``capabilities``."""

    def __init__(self, capability: str, *, also: tuple[str, ...] = ()) -> None:
        self.capability = capability
        self.capabilities = (capability, *also)
        self.routes: list[HostRoute] = []

    def route(self, name: str, *, args: type[InboundModel], least_role: Role) -> Callable[[F], F]:
        def register(handler: F) -> F:
            doc = (handler.__doc__ or name).strip().splitlines()[0]
            result = get_type_hints(handler).get("return")
            if not (isinstance(result, type) and issubclass(result, WireModel)):
                raise TypeError(f"route {name} must declare a WireModel as its result")
            self.routes.append(HostRoute(name, args, least_role, handler, doc, result))
            return handler

        return register


class Channel(Protocol):
    """What the session needs of an RTCDataChannel."""

    @property
    def readyState(self) -> str: ...

    @property
    def bufferedAmount(self) -> int: ...

    def send(self, data: str) -> None: ...


class TeamApi:
    """Every route of this host, by name."""

    def __init__(self, tables: list[HostRouteTable], *, also: tuple[str, ...] = ()) -> None:
        """``also`` names what the host serves outside the route tables (the live view)."""
        self.routes: dict[str, HostRoute] = {}
        self.capabilities = sorted({c for t in tables for c in t.capabilities} | set(also))
        for table in tables:
            for route in table.routes:
                if route.name in self.routes:
                    raise ValueError(f"route {route.name} is declared twice")
                self.routes[route.name] = route

    def capability_list(self) -> dict[str, Any]:
        return {"protocol": PROTOCOL_VERSION, "capabilities": self.capabilities}


class TeamApiLimits:
    """The Team API's rate and in-flight limits of every member of a team on this host.

    One store serves every session of the host, so all peers of one member draw from one
    bucket and share one in-flight cap. A member's running count is forgotten when it
    falls to zero; their bucket is kept when their last peer closes (``TokenBuckets``
    forgets full ones under pressure), so connecting anew does not refill it early.
    """

    def __init__(self, settings: RtcSettings, clock: Clock) -> None:
        self._buckets = TokenBuckets(
            clock, burst=settings.team_api_burst, refill_seconds=1 / settings.team_api_rate
        )
        self._max_in_flight = settings.team_api_in_flight
        self._in_flight: dict[str, int] = {}

    def charge(self, peer: PeerIdentity) -> None:
        """Spend a token of ``peer``'s member for one message, or raise ``RateLimited``:
        every message costs one, a malformed or refused one too."""
        member = _member_key(peer)
        if self._buckets.retry_after(member) > 0:
            raise RateLimited("too many requests; slow down", retry_after=1.0)
        self._buckets.spend(member)

    def admit(self, peer: PeerIdentity) -> None:
        """Count a request of ``peer``'s member as running, or raise ``RateLimited``; each
        admitted request is ended with ``finished``."""
        member = _member_key(peer)
        if self._in_flight.get(member, 0) >= self._max_in_flight:
            raise RateLimited("too many requests at once", retry_after=0.1)
        self._in_flight[member] = self._in_flight.get(member, 0) + 1

    def finished(self, peer: PeerIdentity) -> None:
        """A request ``admit`` let in has ended (answered, failed or cancelled)."""
        member = _member_key(peer)
        running = self._in_flight.pop(member) - 1
        if running:
            self._in_flight[member] = running

    def __len__(self) -> int:
        """How many members have requests running."""
        return len(self._in_flight)


def _member_key(peer: PeerIdentity) -> str:
    return f"{peer.team_id}/{peer.account_id}"


class TeamApiSession:
    """One peer's ``team-api`` channel."""

    def __init__(
        self,
        api: TeamApi,
        peer: PeerIdentity,
        channel: Channel,
        call: object,
        limits: TeamApiLimits,
        metrics: HostMetrics,
    ) -> None:
        self._api = api
        self._metrics = metrics
        self.peer = peer
        self._channel = channel
        self._context = call
        self._limits = limits
        self._tasks = BackgroundTasks("team-api channel")

    def on_message(self, raw: str | bytes) -> None:
        """Called for each message; never raises, since that would end aiortc's receive
        loop and with it every channel of the peer's connection."""
        started = time.perf_counter()
        request: TeamApiRequest | None = None
        try:
            self._limits.charge(self.peer)
            if isinstance(raw, bytes):
                raise CrewhostError("team-api messages are JSON text", code="invalidArgument")
            request = decode_team_api_request(raw)
            self._limits.admit(self.peer)
        except CrewhostError as exc:
            self._refuse(raw, request, exc, started)
            return
        task = self._tasks.spawn(self._handle(request, started))
        task.add_done_callback(lambda _: self._limits.finished(self.peer))

    def _refuse(
        self, raw: str | bytes, request: TeamApiRequest | None, exc: CrewhostError, started: float
    ) -> None:
        """Answer a request refused before it ran; a failure to answer is logged, not raised."""
        try:
            # An oversize message is not even parsed for its id.
            known_id = request_id_of(raw) if utf8_size(raw) <= MAX_TEAM_API_MESSAGE else None
            self._send(TeamApiError(id=known_id, error=error_info(exc)))
            self._answered(request, exc.code, started)
        except Exception:
            log.exception(
                "team-api refusal could not be answered", extra={"peer_id": self.peer.peer_id}
            )

    async def _handle(self, request: TeamApiRequest, started: float) -> None:
        try:
            result = await self._call(request)
        except CrewhostError as exc:
            self._send(TeamApiError(id=request.id, error=error_info(exc)))
            self._answered(request, exc.code, started)
            return
        except Exception:
            log.exception("team-api handler failed", extra={"route": request.route})
            self._send(TeamApiError(id=request.id, error=error_info(Internal("the host failed"))))
            self._answered(request, Internal.code, started)
            return
        if isinstance(result, BaseModel):
            result = result.model_dump(mode="json", by_alias=True)
        self._answer(request, encode(TeamApiResult(id=request.id, result=result)), started)

    def _answer(self, request: TeamApiRequest, answer: str, started: float) -> None:
        """Send a route's answer; one the channel cannot carry becomes a ``messageTooLarge``
        error, so the caller hears at once instead of waiting out its timeout."""
        size = utf8_size(answer)
        fits = size <= MAX_TEAM_API_MESSAGE
        if fits and self._channel.readyState == "open":
            try:
                self._channel.send(answer)
            except ValueError:  # aiortc's refusal: over a smaller limit the remote's offer set
                fits = False
        if not fits:
            log.warning(
                "team-api answer of %s is %d bytes, too large for the channel",
                request.route,
                size,
                extra={"route": request.route, "peer_id": self.peer.peer_id},
            )
            too_large = PayloadTooLarge(
                f"the answer is {size} bytes, more than a team-api message may carry; ask for less",
                code="messageTooLarge",
            )
            self._send(TeamApiError(id=request.id, error=error_info(too_large)))
            self._answered(request, too_large.code, started)
            return
        self._answered(request, "ok", started)

    def _answered(self, request: TeamApiRequest | None, status: str, started: float) -> None:
        # Only declared route names become labels: what a peer typed stays out of them.
        if request is None:
            route = "unparsed"
        else:
            route = request.route if request.route in self._api.routes else "unknown"
        self._metrics.team_api_answered(route, status, time.perf_counter() - started)

    async def _call(self, request: TeamApiRequest) -> Any:
        route = self._api.routes.get(request.route)
        if route is None:
            raise NotFound(f"no route {request.route!r}", code="routeUnknown")
        if not self.peer.role.at_least(route.least_role):
            raise Forbidden(f"{request.route} needs the {route.least_role.value} role or higher")
        try:
            args = route.args.model_validate(request.args)
        except ValidationError as exc:
            raise invalid_argument_from(exc) from exc
        return await route.handler(self._context, args)

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    def event(self, event: HostEvent) -> None:
        self._send(event.message())

    async def drain(self, limit_seconds: float = 0.25) -> None:
        """Wait (briefly) until what was sent has left the channel's buffer."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit_seconds):
                while self._channel.readyState == "open" and self._channel.bufferedAmount:  # noqa: ASYNC110 - no event for an empty buffer
                    await asyncio.sleep(0.005)

    def _send(self, message: WireModel) -> None:
        if self._channel.readyState == "open":
            self._channel.send(encode(message))

    def close(self) -> None:
        self._tasks.cancel()
