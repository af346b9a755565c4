"""OAuth sign-in to an HTTP MCP server, finished by a person in a private tab.

``start`` discovers the server's authorization server, registers a client, makes a PKCE
verifier and a state, and opens the authorization address in a private tab (a throwaway
browser context with no team profile's cookies, under the host's address guard) that only
the admin who started it sees and watches through live view. The redirect is a loopback
address (RFC 8252) that the host reads in the tab: a navigation to it is answered by the
host itself, and a redirect hop to it is read as it starts (nothing listens there). The
state and issuer (RFC 9207) are checked, the tab closed, and the code exchanged (with the
verifier) for tokens, sealed on the server's row only while the server is still the one
the sign-in was made for. One sign-in per server at a time; it expires after
``expire_seconds``; ``cancel`` ends it, and so does deleting the server or changing its
address (``server_changed``). The outcome is the server's ``mcp-server-status``:
``connected``, or ``signIn``/``error`` with the reason (and a code where it has one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import uuid
from dataclasses import dataclass, field

from playwright.async_api import Page, Request, Route

from server.common.errors import Conflict, NotFound, Unavailable
from server.common.public_addresses import NameNotResolved, NonPublicAddress
from server.host.agents.mcp.http_transport import judge_url
from server.host.agents.mcp.oauth import (
    REDIRECT_URI,
    Authorization,
    ClientNeeded,
    Grant,
    OAuthFailed,
)
from server.host.agents.mcp_servers import McpServerChanged, McpServerService
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.runtime import BrowserRuntime
from server.host.storage.mcp_servers import McpServerRow

log = logging.getLogger(__name__)

EXPIRE_SECONDS = 600.0
_CALLBACK = re.compile(re.escape(REDIRECT_URI) + r"(?:[?#].*)?$")
_DONE_PAGE = "<!doctype html><title>Signed in</title><p>Crewhost read the answer; this tab closes."
CHANGED_REASON = (
    "the server's address or OAuth client changed during the sign-in: sign in to it again"
)


@dataclass(eq=False)
class _Pending:
    id: str
    team_id: str
    server_id: str
    account_id: str
    # The server as it was when the sign-in started: its tokens are sealed only for it.
    made_for: McpServerRow
    grant: Grant
    authorization: Authorization
    tab_id: str = ""
    # The private partition of its tab: closed with it, held or not.
    partition: Partition | None = None
    answered: bool = False
    task: asyncio.Task[None] | None = None
    answer: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


@dataclass(eq=False)
class _Starting:
    """The starts of one person's sign-in to a server under way, one at a time."""

    account_id: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    starts: int = 0


@dataclass(frozen=True)
class SignInStarted:
    sign_in_id: str
    tab_id: str


class McpSignIns:
    """The running sign-ins of every team, one per server at a time."""

    def __init__(
        self,
        servers: McpServerService,
        browser: BrowserRuntime,
        *,
        expire_seconds: float = EXPIRE_SECONDS,
    ) -> None:
        self._servers = servers
        self._browser = browser
        self.expire_seconds = expire_seconds
        self._running: dict[tuple[str, str], _Pending] = {}
        self._starting: dict[tuple[str, str], _Starting] = {}

    async def start(self, team_id: str, account_id: str, server_id: str) -> SignInStarted:
        """Open the server's authorization page in a private tab for ``account_id``; a
        sign-in of theirs to the server, running or starting, is replaced."""
        key = (team_id, server_id)
        # Claimed before the first await: two starts at once cannot both pass this check.
        running = self._running.get(key)
        starting = self._starting.get(key)
        holder = starting or running
        if holder is not None and holder.account_id != account_id:
            raise Conflict(
                "Another person is signing in to this MCP server", code="mcpSignInRunning"
            )
        if starting is None:
            starting = self._starting[key] = _Starting(account_id)
        starting.starts += 1
        try:
            async with starting.lock:
                return await self._start(team_id, account_id, server_id)
        finally:
            starting.starts -= 1
            if starting.starts == 0:
                del self._starting[key]

    async def _start(self, team_id: str, account_id: str, server_id: str) -> SignInStarted:
        row = await self._servers.http_server(team_id, server_id)
        assert row.url is not None
        running = self._running.get((team_id, server_id))
        if running is not None:
            await self._end(running, None)  # the same person's: it is replaced
        oauth = self._servers.oauth
        try:
            challenge = await oauth.needs_sign_in(row.url)
            if challenge is None:
                raise Conflict(
                    "This MCP server does not ask for a sign-in", code="mcpSignInNotNeeded"
                )
            grant = await oauth.discover(row.url, challenge, self._servers.client_of(row))
            authorization = oauth.authorization(grant)
            await self._judge(authorization.url)
        except ClientNeeded as exc:
            raise Conflict(f"The sign-in could not start: {exc}", code=exc.code) from None
        except OAuthFailed as exc:
            raise Unavailable(f"The sign-in could not start: {exc}", code=exc.code) from None
        pending = _Pending(
            uuid.uuid4().hex, team_id, server_id, account_id, row, grant, authorization
        )
        self._running[(team_id, server_id)] = pending
        try:
            pending.tab_id = await self._open_tab(pending)
        except BaseException:
            self._running.pop((team_id, server_id), None)
            raise
        pending.task = asyncio.create_task(self._wait(pending))
        log.info("mcp sign-in started", extra={"team_id": team_id, "server_id": server_id})
        return SignInStarted(pending.id, pending.tab_id)

    async def cancel(self, team_id: str, sign_in_id: str) -> None:
        """End a running sign-in of the team: its tab closes, the server still needs one."""
        pending = self._find(team_id, sign_in_id)
        await self._end(pending, "the sign-in was cancelled")

    async def server_changed(self, changed: McpServerChanged) -> None:
        """The server went, or its address changed: its sign-in under way ends (the tab
        closes, and no token is sealed)."""
        pending = self._running.get((changed.team_id, changed.server_id))
        if pending is None:
            return
        if changed.deleted:
            await self._end(pending, None)
            log.info(
                "mcp sign-in ended: its server was deleted",
                extra={"team_id": changed.team_id, "server_id": changed.server_id},
            )
        else:
            await self._end(pending, CHANGED_REASON, code="mcpSignInServerChanged")

    async def close(self) -> None:
        """The host stops: every sign-in ends."""
        for pending in list(self._running.values()):
            await self._end(pending, None)

    # -- the tab ----------------------------------------------------------------------------

    async def _judge(self, url: str) -> None:
        connections = self._servers.connections
        try:
            await judge_url(url, connections.policy, connections.resolver)
        except NonPublicAddress as refused:
            raise OAuthFailed(f"its authorization page's address was refused: {refused}") from None
        except NameNotResolved:
            raise OAuthFailed("its authorization page's name was not found") from None

    async def _open_tab(self, pending: _Pending) -> str:
        engine = await self._browser.engine()
        pending.partition = Partition.private()
        tab = await engine.open_tab(
            pending.team_id, pending.partition, opened_by=pending.account_id
        )
        caller = Caller.person(pending.account_id)

        async def watch(page: Page) -> None:
            await page.route(_CALLBACK, lambda route: self._routed(pending, route))
            page.on("request", lambda request: self._requested(pending, request))

        try:
            await engine.run(pending.team_id, tab.id, caller, watch)
            visit = await engine.visit(pending.team_id, tab.id, caller, pending.authorization.url)
        except BaseException:
            with contextlib.suppress(Exception):
                await engine.close_partition(pending.team_id, pending.partition)
            raise
        if visit.load_error is not None and not pending.answered:
            await engine.close_partition(pending.team_id, pending.partition)
            raise Unavailable(
                f"The authorization page did not load ({visit.load_error})",
                code="mcpSignInFailed",
            )
        return tab.id

    async def _routed(self, pending: _Pending, route: Route) -> None:
        self._answered(pending, route.request.url)
        await route.fulfill(status=200, content_type="text/html", body=_DONE_PAGE)

    def _requested(self, pending: _Pending, request: Request) -> None:
        # A redirect hop is not routed: it is read as it starts.
        if _CALLBACK.match(request.url):
            self._answered(pending, request.url)

    def _answered(self, pending: _Pending, url: str) -> None:
        if not pending.answer.done():
            pending.answered = True
            pending.answer.set_result(url)

    # -- the answer -------------------------------------------------------------------------

    async def _wait(self, pending: _Pending) -> None:
        try:
            async with asyncio.timeout(self.expire_seconds):
                url = await pending.answer
        except TimeoutError:
            await self._end(pending, "the sign-in expired before it was finished")
            return
        try:
            grant = await self._finish(pending, url)
        except OAuthFailed as exc:
            await self._end(pending, f"the sign-in failed: {exc}", code=exc.code)
            return
        await self._end(pending, None)
        if not await self._servers.save_sign_in(pending.made_for, grant):
            # Deleted or changed meanwhile (``server_changed`` said so): nothing is kept.
            log.info(
                "mcp sign-in dropped: its server changed",
                extra={"team_id": pending.team_id, "server_id": pending.server_id},
            )
            return
        log.info(
            "mcp sign-in finished",
            extra={"team_id": pending.team_id, "server_id": pending.server_id},
        )
        await self._servers.signed_in(pending.team_id, pending.server_id)

    async def _finish(self, pending: _Pending, url: str) -> Grant:
        oauth = self._servers.oauth
        code = oauth.answered_code(pending.grant, url, pending.authorization.state)
        return await oauth.exchange(pending.grant, code, pending.authorization.verifier)

    async def _end(self, pending: _Pending, reason: str | None, code: str | None = None) -> None:
        """Drop the sign-in and close its tab; ``reason``: why the server still needs one."""
        key = (pending.team_id, pending.server_id)
        # Only the sign-in the server has says how it ended: a replaced or ended one is quiet.
        tracked = self._running.get(key) is pending
        if tracked:
            del self._running[key]
        task = pending.task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()
        if pending.partition is not None:
            # Closed even while the person holds it: the sign-in is over.
            engine = await self._browser.engine()
            await engine.close_partition(pending.team_id, pending.partition)
        if reason is not None and tracked:
            log.info(
                "mcp sign-in ended",
                extra={"team_id": pending.team_id, "server_id": pending.server_id},
            )
            self._servers.connections.sign_in_needed(
                pending.team_id, pending.server_id, reason, code
            )

    def _find(self, team_id: str, sign_in_id: str) -> _Pending:
        for pending in self._running.values():
            if pending.team_id == team_id and pending.id == sign_in_id:
                return pending
        raise NotFound(
            "No such sign-in running: it ended, expired or was cancelled",
            code="mcpSignInExpired",
        )
