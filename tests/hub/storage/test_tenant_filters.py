"""Repositories never reach across teams: a wrong team_id finds and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.common.roles import Role
from server.db.engine import Database
from server.hub.storage.accounts import Account, AccountRepository
from server.hub.storage.invitations import Invitation, InvitationRepository
from server.hub.storage.teams import Team, TeamRepository
from tests.support.databases import ScratchDatabase
from tests.support.snapshots import database_snapshot

teams = TeamRepository()
invitations = InvitationRepository()


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
    yield opened
    await opened.close()


TEAM_A, TEAM_B = "a1" + "0" * 30, "b1" + "0" * 30
ACCOUNT_A = "a" * 32


async def test_reads_filter_by_team(db: Database) -> None:
    async with db.read() as conn:
        assert await teams.get_role(conn, TEAM_B, ACCOUNT_A) is None
        assert await teams.get_role(conn, TEAM_A, ACCOUNT_A) is Role.OWNER
        assert [m.account_id for m in await teams.list_members(conn, TEAM_B)] == ["b" * 32]
        assert await invitations.list_invitations(conn, TEAM_B) == []
        assert not await invitations.invitation_exists(conn, TEAM_B, "c" * 32)


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
    assert await database_snapshot(db) == before


async def test_invitation_use_stops_at_the_limit(db: Database) -> None:
    async with db.write() as conn:
        results = [await invitations.use_invitation(conn, TEAM_A, "c" * 32, 2.0) for _ in range(7)]
    assert results == [True] * 5 + [False] * 2
