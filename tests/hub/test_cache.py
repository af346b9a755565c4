"""The hub's expiring cache: a value read before a change never outlives that change.

The races run on a real hub over HTTP: a lookup's answer is held back after the database
gave it, a removal or sign-out commits meanwhile, and then the held answer goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from server.common.tickets import TicketRefused, read_ticket
from server.db.engine import Database
from server.db.lookups import Lookup, Row
from server.hub.cache import ExpiringCache
from server.hub.storage import sessions as session_storage
from server.hub.storage import teams as team_storage
from tests.support.clock import FakeClock
from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked
from tests.support.waiting import eventually


def test_a_value_read_before_its_key_was_forgotten_is_not_kept() -> None:
    cache: ExpiringCache[str, str] = ExpiringCache(FakeClock(), seconds=10)
    stamp = cache.stamp()
    cache.forget("a")  # the change commits while "a" is being read
    assert cache.put("a", "old", stamp) is False
    assert cache.get("a") is None
    # Another key, and a read begun after the change, are kept.
    assert cache.put("b", "fine", stamp) is True
    assert cache.put("a", "new", cache.stamp()) is True
    assert (cache.get("a"), cache.get("b")) == ("new", "fine")


def test_a_value_read_before_a_clear_is_not_kept() -> None:
    cache: ExpiringCache[str, str] = ExpiringCache(FakeClock(), seconds=10)
    stamp = cache.stamp()
    cache.clear()
    assert cache.put("a", "old", stamp) is False
    assert cache.get("a") is None


def test_forgotten_keys_are_bounded_and_fail_closed() -> None:
    cache: ExpiringCache[str, str] = ExpiringCache(FakeClock(), seconds=10, max_entries=3)
    stamp = cache.stamp()
    for key in ("a", "b", "c", "d"):
        cache.forget(key)
    # Past the bound every read begun before counts as stale, never as fresh.
    assert [cache.put(key, "old", stamp) for key in ("a", "b", "c", "d")] == [False] * 4


async def test_get_or_read_keeps_nothing_read_across_a_forget() -> None:
    cache: ExpiringCache[str, str] = ExpiringCache(FakeClock(), seconds=10)
    reading, changed = asyncio.Event(), asyncio.Event()

    async def read() -> str:
        reading.set()
        await changed.wait()
        return "old"

    pending = asyncio.create_task(cache.get_or_read("a", read))
    await reading.wait()
    cache.forget("a")
    changed.set()
    assert await pending == "old"  # the read itself answers what it saw
    assert cache.get("a") is None


class HeldLookup:
    """Wraps the hub's ``Database.lookup``: the first answer of ``query`` that ``matches``
    is held after the database gave it, until ``release`` is set."""

    def __init__(
        self, db: Database, query: Lookup, matches: Callable[[dict[str, Any], list[Row]], bool]
    ) -> None:
        self._lookup = db.lookup
        self._query = query
        self._matches = matches
        self.answered = asyncio.Event()
        self.release = asyncio.Event()

    async def lookup(self, query: Lookup, /, **parameters: Any) -> list[Row]:
        rows = await self._lookup(query, **parameters)
        if query is self._query and not self.answered.is_set() and self._matches(parameters, rows):
            self.answered.set()
            await self.release.wait()
        return rows


async def test_a_removed_member_gets_no_ticket_from_a_read_before_the_removal(
    server: RunningHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    member = await server.invite(owner, team_id, "m@example.com", "member")
    assert member.account_id is not None
    host_id = (await owner.get(f"/v1/teams/{team_id}/hosts")).body["hosts"][0]["id"]
    held = HeldLookup(
        server.hub.db,
        team_storage._TEAMS_OF_LOOKUP,
        lambda parameters, _: parameters.get("account_id") == member.account_id,
    )
    monkeypatch.setattr(server.hub.db, "lookup", held.lookup)
    server.hub.teams.forget_cached([member.account_id])

    in_flight = asyncio.create_task(member.get(f"/v1/teams/{team_id}/hosts"))
    await held.answered.wait()  # the member's teams are read, the removal not yet made
    removed = await owner.delete(f"/v1/teams/{team_id}/members/{member.account_id}")
    assert removed.status == 204
    held.release.set()
    assert (await in_flight).status == 200  # it was a member when the request was read

    ticket = await member.post(
        f"/v1/teams/{team_id}/hosts/{host_id}/tickets", {"fingerprint": ":".join(["AB"] * 32)}
    )
    assert (ticket.status, ticket.code) == (404, "teamNotFound")


async def test_a_ticket_asked_for_before_a_removal_is_refused_by_the_host(
    server: RunningHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request itself read the membership before the removal and goes on to sign a
    ticket after it: the ticket says it was issued when the membership was read, so the
    host, which heard of the removal, refuses it."""
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    member = await server.invite(owner, team_id, "m@example.com", "member")
    assert member.account_id is not None
    host_id = (await owner.get(f"/v1/teams/{team_id}/hosts")).body["hosts"][0]["id"]
    await wait_linked(server)
    held = HeldLookup(
        server.hub.db,
        team_storage._TEAMS_OF_LOOKUP,
        lambda parameters, _: parameters.get("account_id") == member.account_id,
    )
    monkeypatch.setattr(server.hub.db, "lookup", held.lookup)
    server.hub.teams.forget_cached([member.account_id])

    asked = asyncio.create_task(
        member.post(
            f"/v1/teams/{team_id}/hosts/{host_id}/tickets", {"fingerprint": ":".join(["AB"] * 32)}
        )
    )
    await held.answered.wait()
    assert (await owner.delete(f"/v1/teams/{team_id}/members/{member.account_id}")).status == 204
    held.release.set()
    granted = await asked
    assert granted.status == 201  # it was a member when the request was read
    peers = server.builtin.services.peers
    await eventually(lambda: len(peers.revocations) > 0)  # the host heard of the removal
    claims = read_ticket(granted.body["ticket"], (await server.hub.tickets.signer()).public_key)
    with pytest.raises(TicketRefused) as refused:
        peers.revocations.check(claims, claims.issued_at)
    assert refused.value.code == "ticketRevoked"


async def test_a_signed_out_session_is_not_revived_by_a_read_before_the_sign_out(
    server: RunningHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = await server.sign_up_owner()
    other = await server.sign_in("owner@example.com", client_kind="peer")
    sessions = (await owner.get("/v1/me/sessions")).body["sessions"]
    other_id = next(s["id"] for s in sessions if not s["current"])
    held = HeldLookup(
        server.hub.db,
        session_storage._SESSION_BY_TOKEN_HASH,
        lambda _, rows: bool(rows) and rows[0][0] == other_id,
    )
    monkeypatch.setattr(server.hub.db, "lookup", held.lookup)
    server.hub.sessions.forget_all_cached()

    in_flight = asyncio.create_task(other.get("/v1/me"))
    await held.answered.wait()
    signed_out = await owner.delete(f"/v1/me/sessions/{other_id}")
    assert signed_out.status == 204
    held.release.set()
    assert (await in_flight).status == 200

    again = await other.get("/v1/me")
    assert (again.status, again.code) == (401, "sessionExpired")
