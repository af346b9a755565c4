"""Repositories never reach across teams: a wrong team_id finds and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from server.common.roles import Role
from server.db.engine import Database
from server.hub.storage.access_tokens import AccessToken, AccessTokenRepository, AccessTokenUse
from server.hub.storage.accounts import Account, AccountRepository
from server.hub.storage.invitations import Invitation, InvitationRepository
from server.hub.storage.teams import Team, TeamRepository
from tests.support.databases import ScratchDatabase
from tests.support.snapshots import database_snapshot

teams = TeamRepository()
invitations = InvitationRepository()
access_tokens = AccessTokenRepository()


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    async with opened.write() as conn:
        for suffix in ("a", "b"):
            await AccountRepository().add_account(
                conn, Account(suffix * 32, f"{suffix}@example.com", suffix, "hash", 1.0)
            )
            await teams.add_team(conn, Team(f"{suffix}1" + "0" * 30, f"Team {suffix}", 1.0))
            await teams.add_membership(conn, f"{suffix}1" + "0" * 30, suffix * 32, Role.OWNER, 1.0)
        await invitations.add_invitation(
            conn,
            Invitation("c" * 32, TEAM_A, "h" * 64, Role.MEMBER, "a" * 32, 1.0, 9e12, 5, 0, None),
        )
        await access_tokens.add_token(conn, A_TOKEN)
        await access_tokens.add_uses(
            conn, [AccessTokenUse("u" * 32, TEAM_A, A_TOKEN.id, "a" * 32, 2.0, "open", "ok")]
        )
    yield opened
    await opened.close()


TEAM_A, TEAM_B = "a1" + "0" * 30, "b1" + "0" * 30
ACCOUNT_A = "a" * 32
# Team A's member's access token (the bearer's hash names no team: the row says which).
A_TOKEN = AccessToken(
    "d" * 32, TEAM_A, "e" * 32, ACCOUNT_A, "laptop", "f" * 64, "browser", 1.0, 9e12, None, None
)


async def test_reads_filter_by_team(db: Database) -> None:
    async with db.read() as conn:
        assert await teams.get_role(conn, TEAM_B, ACCOUNT_A) is None
        assert await teams.get_role(conn, TEAM_A, ACCOUNT_A) is Role.OWNER
        assert [m.account_id for m in await teams.list_members(conn, TEAM_B)] == ["b" * 32]
        assert await invitations.list_invitations(conn, TEAM_B) == []
        assert not await invitations.invitation_exists(conn, TEAM_B, "c" * 32)
        assert await access_tokens.get_token(conn, TEAM_B, A_TOKEN.id) is None
        assert await access_tokens.list_tokens(conn, TEAM_B, ACCOUNT_A) == []
        assert await access_tokens.list_tokens(conn, TEAM_B, None) == []
        assert await access_tokens.list_uses(conn, TEAM_B, account_id=None) == []
        assert await access_tokens.list_uses(conn, TEAM_B, account_id=ACCOUNT_A) == []


async def test_writes_with_another_team_change_nothing(db: Database) -> None:
    before = await database_snapshot(db)
    async with db.write() as conn:
        assert not await invitations.use_invitation(conn, TEAM_B, "c" * 32, 2.0)
        assert not await invitations.revoke_invitation(conn, TEAM_B, "c" * 32, 2.0)
        revoked = await invitations.update_invitations_revoked(
            conn, TEAM_B, created_by=ACCOUNT_A, roles=list(Role), now=2.0
        )
        assert revoked == 0
        await teams.update_role(conn, TEAM_B, ACCOUNT_A, Role.MEMBER)
        await teams.remove_membership(conn, TEAM_B, ACCOUNT_A)
        assert not await access_tokens.update_revoked(conn, TEAM_B, A_TOKEN.id, 2.0)
    assert await database_snapshot(db) == before


async def test_a_use_under_another_team_marks_no_token_used(db: Database) -> None:
    """A use kept under team B (a host's report names the team) leaves team A's token as
    it was: only the audit row is B's."""
    async with db.write() as conn:
        await access_tokens.add_uses(
            conn, [AccessTokenUse("v" * 32, TEAM_B, A_TOKEN.id, ACCOUNT_A, 3.0, "click", "ok")]
        )
    async with db.read() as conn:
        kept = await access_tokens.get_token(conn, TEAM_A, A_TOKEN.id)
    # Its own use (at 2.0, in the fixture) is the last it has.
    assert kept == replace(A_TOKEN, last_used_at=2.0)


async def test_invitation_use_stops_at_the_limit(db: Database) -> None:
    async with db.write() as conn:
        results = [await invitations.use_invitation(conn, TEAM_A, "c" * 32, 2.0) for _ in range(7)]
    assert results == [True] * 5 + [False] * 2
