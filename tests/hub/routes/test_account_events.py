"""``GET /v1/events``: a signed-in browser hears of its own access changes at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import aiohttp

from server.common.protocol.link import LinkRevoke
from server.hub.account_streams import (
    MAX_STREAMS_PER_ACCOUNT,
    STREAM_BACKLOG,
    AccessEvent,
    AccountStreams,
)
from server.hub.storage.sessions import SessionRepository
from tests.support.clock import FakeClock
from tests.support.hub_server import ApiClient, RunningHub

READ_SECONDS = 15


class EventStream:
    """The events of one open stream, read as a browser's EventSource reads them."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def next(self) -> dict[str, Any] | None:
        """The next event's name and data; None once the stream ended."""
        name, data = "message", ""
        async with asyncio.timeout(READ_SECONDS):
            while True:
                line = (await self.response.content.readline()).decode()
                if not line:
                    return None
                line = line.rstrip("\n")
                if not line:
                    if data:
                        return {"event": name, **json.loads(data)}
                    continue
                field, _, value = line.partition(":")
                if field == "event":
                    name = value.strip()
                elif field == "data":
                    data += value.strip()


@asynccontextmanager
async def events_of(client: ApiClient) -> AsyncIterator[EventStream]:
    async with client.session.get(client.base + "/v1/events") as response:
        assert response.status == 200
        assert response.content_type == "text/event-stream"
        assert (await response.content.readline()).startswith(b"retry: ")
        yield EventStream(response)


async def test_a_role_change_a_removal_and_a_sign_out_reach_only_that_members_stream(
    server: RunningHub,
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    member = await server.invite(owner, team_id, "member@example.com", "member")
    async with events_of(member) as heard, events_of(owner) as owner_heard:
        path = f"/v1/teams/{team_id}/members/{member.account_id}"
        assert (await owner.patch(path, {"role": "admin"})).status == 200
        assert await heard.next() == {
            "event": "access",
            "code": "membershipsChanged",
            "teamId": None,
        }
        assert await heard.next() == {"event": "access", "code": "roleChanged", "teamId": team_id}
        # The owner's stream heard nothing of it: its next word is its own new team.
        assert (await owner.post("/v1/teams", {"name": "Second"})).status == 201
        assert (await owner_heard.next() or {})["code"] == "membershipsChanged"

        assert (await owner.delete(path)).status == 204
        assert await heard.next() == {
            "event": "access",
            "code": "membershipsChanged",
            "teamId": None,
        }
        assert await heard.next() == {
            "event": "access",
            "code": "removedFromTeam",
            "teamId": team_id,
        }
        assert (await member.delete("/v1/sessions/current")).status == 204
        assert await heard.next() == {"event": "access", "code": "sessionEnded", "teamId": None}
        assert await heard.next() is None  # the stream ends with its session


async def test_a_session_past_its_time_ends_with_its_stream_unasked(
    server: RunningHub, clock: FakeClock
) -> None:
    """The sweep ends a session at its time, not at its next request: its stream (and with
    it the browser's peer connections) ends then; a session in use goes on."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    member = await server.invite(owner, team_id, "member@example.com", "member")
    async with events_of(owner) as heard:
        clock.advance(server.hub.settings.security.session_idle_seconds - 100)
        assert (await member.get("/v1/teams")).status == 200  # used: not idle
        clock.advance(100)
        assert await server.hub.sessions.end_expired() == 1
        assert await heard.next() == {"event": "access", "code": "sessionEnded", "teamId": None}
        assert await heard.next() is None
    assert (await owner.get("/v1/teams")).code == "sessionExpired"
    assert (await member.get("/v1/teams")).status == 200
    assert await server.hub.sessions.end_expired() == 0


async def test_a_stream_needs_a_session(server: RunningHub) -> None:
    stranger = server.client()
    reply = await stranger.get("/v1/events")
    assert (reply.status, reply.code) == (401, "unauthenticated")


async def test_an_account_keeps_a_bounded_number_of_streams_and_each_a_bounded_backlog() -> None:
    streams = AccountStreams()
    async with AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(streams.opened("a", f"s{i}"))
            for i in range(MAX_STREAMS_PER_ACCOUNT + 1)
        ]
        # One too many opened: the oldest was told to end, and is no longer held.
        assert opened[0].pending.get_nowait() is None
        assert streams.count() == MAX_STREAMS_PER_ACCOUNT
        for _ in range(100):
            streams.tell_accounts(["a"], AccessEvent("membershipsChanged"))
        assert opened[-1].pending.qsize() == STREAM_BACKLOG + 1
        streams.end_sessions(["s5"])
        words = [opened[5].pending.get_nowait() for _ in range(opened[5].pending.qsize())]
        assert words[-2:] == [AccessEvent("sessionEnded"), None]
    assert streams.count() == 0


async def test_a_session_another_hub_instance_ended_is_refused_here_at_once(
    server: RunningHub,
) -> None:
    """Each instance caches sessions for a few seconds; word of an ending on the bus must
    clear that cache, or a signed-out browser would still pass here meanwhile."""
    owner = await server.sign_up_owner()
    assert (await owner.get("/v1/me")).status == 200  # this instance caches the session now
    sessions = (await owner.get("/v1/me/sessions")).body["sessions"]
    [current] = [s for s in sessions if s["current"]]
    # Another instance signs the session out: the row goes, and word comes on the bus.
    hub = server.hub
    assert owner.account_id is not None
    async with hub.db.write() as conn:
        token_hash = await SessionRepository().remove_session(conn, owner.account_id, current["id"])
    assert token_hash is not None
    revoke = LinkRevoke(
        session_hashes=[token_hash], code="sessionEnded", reason="signed out", revoked_at=0
    )
    await hub.on_bus(
        {
            "kind": "revoke",
            "origin": "another-instance",
            "host_id": None,
            "revoke": revoke.model_dump(mode="json"),
        }
    )
    assert (await owner.get("/v1/me")).status == 401
