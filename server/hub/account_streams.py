"""Live word of a signed-in account's access, as server-sent events (``GET /v1/events``).

A web page that shows only hub screens (members, invitations, hosts) has no host
connection to hear a change on; this stream is how a role change, a removal or a
sign-out elsewhere reaches it at once. Every hub instance applies every access change
(``AccessChanges`` on the bus), so whichever instance holds a browser's stream tells it.

An event says only what kind of change happened and to which team, never what changed
to what: the page reloads what it shows. A stream is bounded (a slow reader loses the
oldest words, which only ever say "reload"), an account keeps at most a few streams (the
oldest ends when another opens), and a stream whose session ends closes after saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Literal

from aiohttp import web

from server.common.protocol.link import LinkRevoke

AccessCode = Literal["membershipsChanged", "roleChanged", "removedFromTeam", "sessionEnded"]

# Streams one account may hold at once (a person with many tabs and devices).
MAX_STREAMS_PER_ACCOUNT = 12
# Words a stream keeps for a reader that lags; older ones go first.
STREAM_BACKLOG = 8
# A comment line this often keeps proxies from closing an idle stream.
HEARTBEAT_SECONDS = 25.0
# How long a browser waits before it opens a stream again after losing one.
RETRY_MS = 3_000


@dataclass(frozen=True, slots=True)
class AccessEvent:
    code: AccessCode
    team_id: str | None = None

    def encode(self) -> bytes:
        data = json.dumps({"code": self.code, "teamId": self.team_id}, separators=(",", ":"))
        return f"event: access\ndata: {data}\n\n".encode()


@dataclass(eq=False)
class AccountStream:
    """One browser's stream: what it has still to be told, and whether it ended."""

    account_id: str
    session_hash: str
    pending: asyncio.Queue[AccessEvent | None] = field(
        default_factory=lambda: asyncio.Queue(STREAM_BACKLOG + 1)
    )

    def tell(self, event: AccessEvent | None) -> None:
        """Queue ``event`` (None ends the stream); a full backlog drops its oldest word."""
        while self.pending.full():
            self.pending.get_nowait()
        self.pending.put_nowait(event)


class AccountStreams:
    """The streams held by this hub instance, by account."""

    def __init__(self) -> None:
        self._streams: dict[str, list[AccountStream]] = {}

    def count(self) -> int:
        return sum(len(streams) for streams in self._streams.values())

    @contextlib.asynccontextmanager
    async def opened(self, account_id: str, session_hash: str) -> AsyncIterator[AccountStream]:
        stream = AccountStream(account_id, session_hash)
        held = self._streams.setdefault(account_id, [])
        held.append(stream)
        while len(held) > MAX_STREAMS_PER_ACCOUNT:
            held.pop(0).tell(None)
        try:
            yield stream
        finally:
            if stream in held:
                held.remove(stream)
            if not held:
                self._streams.pop(account_id, None)

    def tell_accounts(self, account_ids: Iterable[str] | None, event: AccessEvent) -> None:
        """Tell every stream of ``account_ids`` (None: of every account)."""
        ids = list(self._streams) if account_ids is None else account_ids
        for account_id in ids:
            for stream in self._streams.get(account_id, ()):
                stream.tell(event)

    def end_sessions(self, session_hashes: Iterable[str]) -> None:
        """The sessions ended: their streams say so, then close."""
        ended = set(session_hashes)
        for streams in self._streams.values():
            for stream in streams:
                if stream.session_hash in ended:
                    stream.tell(AccessEvent("sessionEnded"))
                    stream.tell(None)

    def memberships_changed(self, account_ids: list[str] | None) -> None:
        """The teams or roles of these accounts changed (None: of anyone)."""
        self.tell_accounts(account_ids, AccessEvent("membershipsChanged"))

    def revoked(self, revoke: LinkRevoke) -> None:
        """Access ended (``AccessChanges``): sessions that ended close their streams, and a
        member whose role changed or who was removed hears so with the team."""
        self.end_sessions(revoke.session_hashes)
        if revoke.account_id is not None and revoke.code in ("roleChanged", "removedFromTeam"):
            event = AccessEvent(
                "roleChanged" if revoke.code == "roleChanged" else "removedFromTeam",
                revoke.team_id,
            )
            self.tell_accounts([revoke.account_id], event)

    def close_all(self) -> None:
        """The hub is stopping: every stream ends."""
        for streams in self._streams.values():
            for stream in streams:
                stream.tell(None)

    async def serve(
        self, request: web.Request, account_id: str, session_hash: str
    ) -> web.StreamResponse:
        """The event stream of one signed-in browser, until it or its session ends."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",  # a reverse proxy passes each event on at once
            }
        )
        await response.prepare(request)
        async with self.opened(account_id, session_hash) as stream:
            # A browser that went away shows as a failed write: the stream just ends.
            with contextlib.suppress(ConnectionResetError):
                await response.write(f"retry: {RETRY_MS}\n: connected\n\n".encode())
                while True:
                    try:
                        async with asyncio.timeout(HEARTBEAT_SECONDS):
                            event = await stream.pending.get()
                    except TimeoutError:
                        await response.write(b": keep-alive\n\n")
                        continue
                    if event is None:
                        break
                    await response.write(event.encode())
        return response
