"""Live MCP sessions: one per enabled server of a team, started when first needed, closed
after ``idle_seconds`` without a call, and with the host.

Each session runs in its own task (the SDK's client is entered and left in one task). Its
status is ``starting``, ``connected``, ``error`` (the reason in words) or ``idle`` (not
running; it starts at the next use) or ``signIn`` (an HTTP server that answers 401: it
needs an OAuth sign-in, or its tokens could not be refreshed). Every change of status is
announced to the team (``mcp-server-status``).

A server that ends on its own (a crash, garbage on stdout) shows ``error`` and starts again
at the next use, after a backoff that doubles with each crash in a row. ``initialize`` and
the first tool list must finish within ``start_seconds``. ``notifications/tools/list_changed``
makes the session list the tools again. Sessions are keyed by team and server: one team's
calls never reach a session of another.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from typing import Literal

from mcp import Client, types
from mcp.client._transport import TransportStreams
from mcp.client.session import IncomingMessage, MessageHandlerFnT
from mcp.shared.exceptions import MCPError

from server.common.protocol.events import HostEvent, McpServerStatusChanged
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    system_resolve,
)
from server.host.agents.mcp.http_transport import (
    HttpDial,
    HttpReplies,
    http_transport,
    sse_transport,
)
from server.host.agents.mcp.oauth import BearerAuth, BearerSource
from server.host.agents.mcp.sandbox import CommandHidden, SandboxUnavailable, StdioSandbox
from server.host.agents.mcp.stdio_transport import Ended, StdioCommand, stdio_transport
from server.host.agents.mcp.tool_schemas import MAX_TOOLS, McpTool, adapt_tools

log = logging.getLogger(__name__)

McpStatus = Literal["idle", "starting", "connected", "error", "signIn"]
# What a start within the backoff after a crash does: wait it out, skip, or start now.
Backoff = Literal["wait", "skip", "now"]
# Backoff after a crash: doubled with each crash in a row, up to the last.
BACKOFF_SECONDS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 60.0)
# A session that lived this long before it ended starts the next without waiting.
STEADY_SECONDS = 60.0
_LIST_PAGES = MAX_TOOLS // 10 + 2
# How long a server has to answer a ping after a call failed.
PING_SECONDS = 5.0

Announce = Callable[[str, HostEvent], None]
SIGN_IN_REASON = "it asks for a sign-in (OAuth): an owner or admin signs in to it"


class SignInNeeded(Exception):
    """The server's tokens are gone or could not be refreshed; the message says why."""


@dataclass(frozen=True)
class ServerTarget:
    """What a session connects to: a stdio command or an HTTP address, with the admin's
    environment values or headers opened from the secret box."""

    team_id: str
    server_id: str
    name: str
    transport: Literal["stdio", "http"]
    call_timeout: float
    command: StdioCommand | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    # A signed-in server's access token (refreshed when it is about to expire, or forced).
    bearer: BearerSource | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ServerState:
    status: McpStatus
    reason: str | None = None
    tools: tuple[McpTool, ...] = ()
    problems: tuple[str, ...] = ()
    # The stable name of why, where there is one (a sign-in refused for a known cause).
    code: str | None = None


STDIO_NOT_ALLOWED = (
    "this host runs no stdio MCP server for this team: each runs code of the admin's choosing "
    "on the host's machine, so its operator allows them (CREWHOST_HOST_MCP_STDIO_TEAMS)"
)
STDIO_CODE = "mcpStdioNotAllowed"


class McpUnavailable(Exception):
    """The server could not be reached; the message says why, for a person."""


class McpCallFailed(Exception):
    """A call did not come back (timeout, the server ended); the message says why."""


@dataclass(eq=False)
class _Session:
    target: ServerTarget
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    gone: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: Ended = field(default_factory=Ended)
    http: HttpReplies = field(default_factory=HttpReplies)
    client: Client | None = None
    task: asyncio.Task[None] | None = None
    last_used: float = field(default_factory=time.monotonic)
    active: int = 0
    # False once the session is ending: a new call starts a new session.
    accepting: bool = True
    started_at: float = field(default_factory=time.monotonic)
    # Why the server needs a sign-in, when it does (a 401, a refused refresh).
    sign_in: str | None = None


@dataclass
class _Record:
    state: ServerState = field(default_factory=lambda: ServerState("idle"))
    session: _Session | None = None
    crashes: int = 0
    ended_at: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class McpConnections:
    """The host's MCP sessions. Used as an async context manager: leaving it ends them."""

    def __init__(
        self,
        announce: Announce,
        *,
        policy: PublicOnlyPolicy,
        resolver: Resolver = system_resolve,
        idle_seconds: float = 600.0,
        start_seconds: float = 30.0,
        stdio_teams: Iterable[str] = (),
        sandbox: StdioSandbox | None,
    ) -> None:
        self._announce = announce
        self.policy = policy
        self._stdio_teams = frozenset(stdio_teams)
        self._sandbox = sandbox
        self.resolver = resolver
        self._idle_seconds = idle_seconds
        self._start_seconds = start_seconds
        self._records: dict[tuple[str, str], _Record] = {}
        self._closing = False

    @property
    def sandbox(self) -> StdioSandbox | None:
        return self._sandbox

    def allows_stdio(self, team_id: str) -> bool:
        """Whether the team's stdio servers may run (``host.mcp_stdio_teams``): each is a
        command of the admin's choosing run on the host's machine."""
        return "*" in self._stdio_teams or team_id in self._stdio_teams

    async def __aenter__(self) -> McpConnections:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing = True
        await asyncio.gather(*(self._end(key) for key in list(self._records)))

    # -- what the service asks ------------------------------------------------------------

    def state(self, team_id: str, server_id: str) -> ServerState:
        record = self._records.get((team_id, server_id))
        return ServerState("idle") if record is None else record.state

    async def ready(self, target: ServerTarget, *, after_crash: Backoff = "skip") -> ServerState:
        """Start the server's session if it is not running; its state once it is up (or
        failed to come up). Never raises for the server's faults. Within the backoff after
        a crash, ``skip`` answers the error as it is (a turn starts without that server's
        tools), ``now`` starts it at once (an admin's test)."""
        with contextlib.suppress(McpUnavailable):
            await self._session(target, after_crash)
        return self.state(target.team_id, target.server_id)

    async def call(
        self, target: ServerTarget, tool: str, arguments: dict[str, object]
    ) -> types.CallToolResult:
        """Call ``tool``; raises ``McpUnavailable`` or ``McpCallFailed`` with the reason."""
        session = await self._session(target)
        assert session.client is not None
        session.active += 1
        session.last_used = time.monotonic()
        timeout = target.call_timeout
        try:
            async with asyncio.timeout(timeout):
                return await session.client.call_tool(
                    tool, dict(arguments), read_timeout_seconds=timeout
                )
        except TimeoutError as exc:
            if session.sign_in is not None:
                raise McpCallFailed(session.sign_in) from exc
            raise McpCallFailed(f"the server did not answer within {timeout:g} s") from exc
        except Exception as exc:
            if session.sign_in is None and session.http.unauthorized is not None:
                session.sign_in = SIGN_IN_REASON
            if session.sign_in is not None:
                session.gone.set()
                raise McpCallFailed(session.sign_in) from exc
            if not isinstance(exc, MCPError):
                # The client could not take the answer (structured content against the
                # tool's own output schema, a content block of the wrong shape): this
                # call failed; the session goes on.
                log.info("MCP server %s answered %s with %s", target.name, tool, type(exc).__name__)
                raise McpCallFailed(
                    f"the server's answer broke the protocol's rules: {str(exc)[:300]}"
                ) from exc
            if session.ended.reason is None and not await self._answers(session):
                # An HTTP server that went away: the session ends, the next use reconnects.
                session.ended.reason = "the server stopped answering"
                session.gone.set()
            reason = session.ended.reason or str(exc)[:300]
            raise McpCallFailed(f"the call failed: {reason}") from exc
        finally:
            session.active -= 1
            session.last_used = time.monotonic()

    async def _answers(self, session: _Session) -> bool:
        """Whether the server still answers a ping (a refused call is not a dead server)."""
        client = session.client
        if client is None:
            return False
        try:
            async with asyncio.timeout(PING_SECONDS):
                await client.send_ping()
        except Exception:
            return False
        return True

    def sign_in_needed(
        self, team_id: str, server_id: str, reason: str, code: str | None = None
    ) -> None:
        """Say the server needs a sign-in (a sign-in that failed, expired or was cancelled,
        a refresh that was refused); ``code`` names the cause where it has a name."""
        key = (team_id, server_id)
        record = self._records.setdefault(key, _Record())
        self._set(key, record, ServerState("signIn", reason, code=code))

    async def forget(self, team_id: str, server_id: str) -> None:
        """The server changed or went: its session ends (the next use starts a new one)."""
        await self._end((team_id, server_id))
        self._records.pop((team_id, server_id), None)

    # -- sessions -------------------------------------------------------------------------

    async def _session(self, target: ServerTarget, after_crash: Backoff = "wait") -> _Session:
        if self._closing:
            raise McpUnavailable("the host is stopping")
        key = (target.team_id, target.server_id)
        record = self._records.setdefault(key, _Record())
        if target.transport == "stdio" and not self.allows_stdio(target.team_id):
            # Saved while the host allowed it: it starts no more, and says so for good.
            self._set(key, record, ServerState("error", STDIO_NOT_ALLOWED, code=STDIO_CODE))
            raise McpUnavailable(STDIO_NOT_ALLOWED)
        async with record.lock:
            session = record.session
            if (
                session is None
                or session.task is None
                or session.task.done()
                or not session.accepting
            ):
                await self._backoff(record, target, after_crash)
                session = _Session(target)
                record.session = session
                self._set(key, record, ServerState("starting"))
                session.task = asyncio.create_task(self._run(key, record, session))
        await session.ready.wait()
        if session.client is None or record.state.status != "connected":
            raise McpUnavailable(record.state.reason or "the server is not connected")
        return session

    async def _backoff(self, record: _Record, target: ServerTarget, after_crash: Backoff) -> None:
        """After a crash, wait before starting again (a call waits at most its timeout)."""
        if record.crashes == 0 or after_crash == "now":
            return
        delay = BACKOFF_SECONDS[min(record.crashes, len(BACKOFF_SECONDS)) - 1]
        wait = record.ended_at + delay - time.monotonic()
        if wait <= 0:
            return
        if after_crash == "skip":
            raise McpUnavailable(record.state.reason or "the server crashed")
        await asyncio.sleep(min(wait, target.call_timeout))

    async def _end(self, key: tuple[str, str]) -> None:
        record = self._records.get(key)
        session = None if record is None else record.session
        if session is None or session.task is None:
            return
        session.stop.set()
        if not session.ready.is_set():
            session.task.cancel()  # still starting: nothing to wind down in order
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await session.task

    async def _run(self, key: tuple[str, str], record: _Record, session: _Session) -> None:
        target = session.target
        failure: str | None = None
        try:
            async with AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self._start_seconds):
                        try:
                            client = await self._connect(stack, session, sse=False)
                        except Exception:
                            # A server of the older HTTP+SSE transport refuses the POST.
                            if not session.http.refused_post:
                                raise
                            client = await self._connect(stack, session, sse=True)
                        tools, problems = await self._list(target, client)
                except TimeoutError:
                    failure = session.ended.reason or (
                        f"the server did not start within {self._start_seconds:g} s "
                        "(initialize and its tool list)"
                    )
                    return
                session.client = client
                session.last_used = time.monotonic()
                self._set(key, record, ServerState("connected", None, tools, problems))
                session.ready.set()
                failure = await self._serve(key, record, session, client)
                session.accepting = False
        except Exception as exc:
            if session.sign_in is None and session.http.unauthorized is not None:
                session.sign_in = SIGN_IN_REASON
            failure = session.sign_in or session.ended.reason or _reason(exc)
            log.info("mcp session ended", extra={"team_id": target.team_id, "reason": failure})
        finally:
            session.accepting = False
            session.client = None
            session.ready.set()
            self._ended(key, record, session, failure)

    async def _serve(
        self, key: tuple[str, str], record: _Record, session: _Session, client: Client
    ) -> str | None:
        """Keep the session until it is idle, stopped or gone; None when the host ended it."""
        while True:
            idle_for = time.monotonic() - session.last_used
            wait = self._idle_seconds - idle_for
            if wait <= 0 and session.active == 0:
                session.accepting = False
                return None
            events = (session.stop, session.gone, session.changed)
            waiters = [asyncio.create_task(e.wait()) for e in events]
            try:
                await asyncio.wait(waiters, timeout=max(wait, 0.5), return_when="FIRST_COMPLETED")
            finally:
                for waiter in waiters:
                    waiter.cancel()
            if session.stop.is_set():
                return None
            if session.gone.is_set():
                return session.ended.reason or "the server ended the session"
            if session.changed.is_set():
                session.changed.clear()
                try:
                    async with asyncio.timeout(self._start_seconds):
                        tools, problems = await self._list(session.target, client)
                except TimeoutError:
                    return "the server did not list its tools again in time"
                except McpUnavailable as exc:
                    return str(exc)
                self._set(key, record, ServerState("connected", None, tools, problems))

    def _ended(
        self, key: tuple[str, str], record: _Record, session: _Session, failure: str | None
    ) -> None:
        if record.session is not session:
            return
        now = time.monotonic()
        if session.sign_in is not None:
            # Not a crash: it starts again once someone signs in (or at the next use).
            record.crashes = 0
            self._set(key, record, ServerState("signIn", session.sign_in))
            return
        if failure is None:
            record.crashes = 0
            self._set(key, record, ServerState("idle"))
            return
        lived = now - session.started_at
        record.crashes = 1 if lived >= STEADY_SECONDS else record.crashes + 1
        record.ended_at = now
        delay = BACKOFF_SECONDS[min(record.crashes, len(BACKOFF_SECONDS)) - 1]
        self._set(
            key,
            record,
            ServerState("error", f"{failure}; it starts again at the next use (after {delay:g} s)"),
        )

    async def _connect(self, stack: AsyncExitStack, session: _Session, *, sse: bool) -> Client:
        """The SDK's client, initialized, over the server's transport."""
        client = Client(
            self._transport(session, sse=sse),
            mode="legacy",
            message_handler=self._listener(session),
            read_timeout_seconds=self._start_seconds,
            cache=None,
        )
        return await stack.enter_async_context(client)

    def _transport(
        self, session: _Session, *, sse: bool
    ) -> AbstractAsyncContextManager[TransportStreams]:
        target = session.target
        if target.transport == "stdio":
            assert target.command is not None
            return stdio_transport(
                target.command,
                target.name,
                session.ended,
                session.gone,
                self._sandbox,
                policy=self.policy,
                resolver=self.resolver,
            )
        assert target.url is not None
        auth = None
        if target.bearer is not None:
            auth = BearerAuth(self._bearer(session, target.bearer))
        dial = HttpDial(target.url, target.headers, self.policy, self.resolver, auth)
        return sse_transport(dial) if sse else http_transport(dial, session.http)

    @staticmethod
    def _bearer(session: _Session, source: BearerSource) -> BearerSource:
        async def token(force: bool) -> str:
            try:
                return await source(force)
            except SignInNeeded as exc:
                if session.sign_in is None:  # the first reason is the one that says why
                    session.sign_in = str(exc)
                session.gone.set()
                raise

        return token

    def _listener(self, session: _Session) -> MessageHandlerFnT:
        async def heard(message: IncomingMessage) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                session.changed.set()

        return heard

    async def _list(
        self, target: ServerTarget, client: Client
    ) -> tuple[tuple[McpTool, ...], tuple[str, ...]]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            if len(tools) > MAX_TOOLS:
                raise McpUnavailable(
                    f"the server offers more than {MAX_TOOLS} tools; Crewhost refuses it"
                )
            cursor = page.next_cursor
            if cursor is None:
                break
        kept, problems = adapt_tools(target.name, tools)
        return tuple(kept), tuple(problems)

    def _set(self, key: tuple[str, str], record: _Record, state: ServerState) -> None:
        if state == record.state:
            return
        record.state = state
        self._announce(
            key[0],
            McpServerStatusChanged(
                server_id=key[1],
                status=state.status,
                reason=state.reason,
                tools=len(state.tools),
                problems=list(state.problems),
                code=state.code,
            ),
        )


def _reason(exc: BaseException) -> str:
    """A failure in words; an exception group says its first cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpUnavailable | SandboxUnavailable):
        return str(exc)
    if isinstance(exc, (NonPublicAddress, NameNotResolved)):
        return f"its address was refused: {exc}"
    if isinstance(exc, MCPError):
        return f"the server refused: {str(exc)[:200]}"
    if isinstance(exc, CommandHidden):
        return (
            "its command is outside what the stdio sandbox shows: the host's operator lists "
            "its folder in host.mcp_stdio_paths"
        )
    if isinstance(exc, FileNotFoundError):
        return "its command was not found"
    if isinstance(exc, PermissionError):
        return "its command may not be run"
    if isinstance(exc, OSError):
        return f"it could not be reached ({exc.strerror or type(exc).__name__})"
    return f"it failed ({type(exc).__name__})"
