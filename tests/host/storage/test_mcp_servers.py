"""The MCP server repository on both databases: a hand-entered OAuth client is kept, and a
sign-in's tokens are written only while the row is still what the sign-in was made for."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from server.db.engine import Database
from server.host.storage.mcp_servers import McpServerRepository, McpServerRow
from tests.support.databases import ScratchDatabase

repo = McpServerRepository()
TEAM = "a" * 32
SUBJECT = ("transport", "url", "oauth_client_id", "oauth_client_secret")
ROW = McpServerRow(
    id="s" * 32,
    team_id=TEAM,
    name="wiki",
    transport="http",
    command=None,
    args=(),
    url="https://wiki.example/mcp",
    secret_names=(),
    secrets=None,
    call_timeout=60.0,
    enabled=True,
    created_by="m" * 32,
    created_at=1.0,
    updated_at=1.0,
    oauth_client_id="client-1",
    oauth_client_secret=b"\x01sealed",
)


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    async with opened.write() as conn:
        await repo.add_server(conn, ROW)
    yield opened
    await opened.close()


def subject(row: McpServerRow) -> dict[str, object]:
    return {name: getattr(row, name) for name in SUBJECT}


async def test_the_entered_client_is_kept_and_its_secret_not_shown(db: Database) -> None:
    async with db.read() as conn:
        found = await repo.get_server(conn, TEAM, ROW.id)
    assert found == ROW
    assert "sealed" not in repr(found)


async def test_tokens_are_written_only_while_the_row_is_what_the_sign_in_was_made_for(
    db: Database,
) -> None:
    async with db.write() as conn:
        assert await repo.update_server_if(conn, TEAM, ROW.id, subject(ROW), oauth=b"one")
        # The client's secret changed since: nothing is written.
        await repo.update_server(conn, TEAM, ROW.id, oauth_client_secret=b"\x01other")
        assert not await repo.update_server_if(conn, TEAM, ROW.id, subject(ROW), oauth=b"two")
        # Nor for another address, another team's row, or a row gone.
        moved = replace(ROW, oauth_client_secret=b"\x01other", url="https://elsewhere.example")
        assert not await repo.update_server_if(conn, TEAM, ROW.id, subject(moved), oauth=b"3")
        now = replace(ROW, oauth_client_secret=b"\x01other")
        assert not await repo.update_server_if(conn, "b" * 32, ROW.id, subject(now), oauth=b"4")
        # No client at all compares as equal too (NULL is NULL here).
        await repo.update_server(conn, TEAM, ROW.id, oauth_client_id=None, oauth_client_secret=None)
        bare = replace(ROW, oauth_client_id=None, oauth_client_secret=None)
        assert await repo.update_server_if(conn, TEAM, ROW.id, subject(bare), oauth=b"five")
        await repo.remove_server(conn, TEAM, ROW.id)
        assert not await repo.update_server_if(conn, TEAM, ROW.id, subject(bare), oauth=b"six")
    async with db.read() as conn:
        assert await repo.get_server(conn, TEAM, ROW.id) is None
