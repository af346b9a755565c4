"""mcp-sign-in-v1 over real peers, a real Chromium tab and the SDK's MCP server guarded by a
local OAuth authorization server: an admin signs in through a private tab, the tokens are
sealed and refreshed, and an agent's call carries the bearer; what goes wrong ends with the
server asking for a sign-in again, with the reason."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from peer.connection import HostConnection
from server.host.agents.mcp.oauth import Grant
from server.host.browser.callers import Caller
from server.host.storage.mcp_servers import McpServerRepository
from tests.host.routes.conftest import Team, database_bytes, refused
from tests.host.routes.test_mcp_servers import unasked_call, until
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic
from tests.support.fakes.oauth_server import (
    PASSWORD,
    USER,
    FakeAuthorizationServer,
    authorization_server,
    guarded_notes,
)
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import peer_member


@pytest.fixture
async def server(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """The hub and its host, which may dial MCP servers on loopback (the fakes)."""
    allowed = {"host.mcp_allowed_hosts": ["127.0.0.1", "localhost"]}
    settings = hub_settings(tmp_path, database, **allowed)
    async with running_hub(settings, database, clock=clock) as running:
        yield running


@pytest.fixture
async def oauth() -> AsyncIterator[FakeAuthorizationServer]:
    async with authorization_server() as fake:
        yield fake


@pytest.fixture
async def notes_url(oauth: FakeAuthorizationServer) -> AsyncIterator[str]:
    async with guarded_notes(oauth) as url:
        yield url


async def add_guarded(team: Team, url: str) -> dict[str, Any]:
    added: dict[str, Any] = await team.admin.call(
        "mcp-servers-v1/add", {"name": "notes", "transport": "http", "url": url}
    )
    return added


async def finish_in_tab(server: RunningHub, team: Team, tab_id: str) -> None:
    """Type the user and password into the authorization page and allow, in the tab."""
    engine = await server.builtin.services.browser.engine()
    tab = engine.get_tab(team.team_id, tab_id)
    assert tab.partition.kind == "private"
    assert tab.opened_by is not None

    async def sign_in(page: Page) -> None:
        await page.wait_for_selector("#allow")
        await page.fill("#user", USER)
        await page.fill("#password", PASSWORD)
        await page.click("#allow")

    await engine.run(team.team_id, tab_id, Caller.person(tab.opened_by), sign_in)


async def signed_in(
    server: RunningHub, team: Team, url: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Add the guarded server, sign in to it; the server and its connected status."""
    added = await add_guarded(team, url)
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    await finish_in_tab(server, team, started["tabId"])
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="connected")
    return added, status


async def test_an_admin_signs_in_through_a_private_tab_and_an_agent_calls_with_the_bearer(
    server: RunningHub,
    team: Team,
    oauth: FakeAuthorizationServer,
    notes_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    added = await add_guarded(team, notes_url)
    tested = await team.admin.call("mcp-servers-v1/test", {"id": added["id"]})
    assert tested["status"]["status"] == "signIn"
    assert "sign-in" in tested["status"]["reason"]
    assert await refused(team.member, "mcp-sign-in-v1/start", {"serverId": added["id"]}) == (
        "forbidden"
    )

    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    # The authorization request: a registered client, PKCE, a state, the loopback redirect.
    [query] = oauth.authorize_queries
    assert query["client_id"] in oauth.clients
    assert query["code_challenge_method"] == "S256"
    assert query["redirect_uri"] == "http://127.0.0.1:33418/callback"
    assert query["resource"] == notes_url
    # Only the admin who started it sees the private tab.
    member_tabs = await team.member.call("browser-control-v1/list_tabs")
    assert started["tabId"] not in json.dumps(member_tabs)

    await finish_in_tab(server, team, started["tabId"])
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="connected")
    assert status["tools"] > 0
    assert oauth.grants == ["authorization_code"]
    engine = await server.builtin.services.browser.engine()
    assert started["tabId"] not in {tab.id for tab in engine.list_tabs(team.team_id)}

    async with FakeAnthropic() as anthropic:
        await team.admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        oauth.introspected.clear()
        await unasked_call(team, anthropic, added["id"], "echo", {"text": "signed"})
        assert "signed [-]" in json.dumps(anthropic.requests[-1].messages())
    # The call went with the access token the sign-in got.
    assert oauth.introspected
    assert set(oauth.introspected) <= set(oauth.access)

    # The tokens are nowhere a person or a log reads, nor stored in the clear.
    listed = json.dumps(await team.admin.call("mcp-servers-v1/list"))
    stored = database_bytes(tmp_path)
    for token in oauth.issued_tokens():
        assert token not in listed
        assert token not in caplog.text
        assert token.encode() not in stored


async def test_a_refresh_before_expiry_and_a_refused_one_asks_for_a_sign_in_again(
    server: RunningHub, team: Team, oauth: FakeAuthorizationServer, notes_url: str
) -> None:
    # Tokens that live 30 s are within the refresh margin: every use refreshes first.
    oauth.lifetime = 30
    added, _status = await signed_in(server, team, notes_url)
    agent = await team.admin.call("agents-v1/create", {"name": "Scribe"})
    give = {"id": added["id"], "agentId": agent["id"], "enabled": True}
    await team.admin.call("mcp-servers-v1/set_agent", give)
    mcp = server.builtin.services.mcp_servers
    await mcp.connections.forget(team.team_id, added["id"])
    tested = await team.admin.call("mcp-servers-v1/test", {"id": added["id"]})
    assert tested["status"]["status"] == "connected"
    assert "refresh_token" in oauth.grants

    # A turn's call meets a refused refresh: a failed call naming the server, and why.
    offered = await mcp.turn_tools(team.team_id, agent["id"])
    assert offered is not None
    oauth.refuse_refresh = True
    answer = await offered.call("mcp__notes__echo", {"text": "x"})
    error = answer.result["error"]
    assert error["code"] == "toolFailed"
    assert error["message"].startswith("notes: its sign-in ended")
    assert "invalid_grant" in error["message"]
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="signIn")
    assert "invalid_grant" in status["reason"]
    # It stays so (the next turn is offered none of its tools) until someone signs in.
    tested = await team.admin.call("mcp-servers-v1/test", {"id": added["id"]})
    assert tested["status"]["status"] == "signIn"
    assert "invalid_grant" in tested["status"]["reason"]
    assert await mcp.turn_tools(team.team_id, agent["id"]) is None


async def test_tokens_refreshed_as_the_address_changed_are_not_kept(
    server: RunningHub,
    team: Team,
    oauth: FakeAuthorizationServer,
    notes_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    oauth.lifetime = 30  # every use refreshes first
    added, _status = await signed_in(server, team, notes_url)
    services = server.builtin.services
    mcp = services.mcp_servers
    await mcp.connections.forget(team.team_id, added["id"])
    refresh = mcp.oauth.refresh

    async def refreshed_as_the_address_changed(grant: Grant) -> Grant:
        fresh = await refresh(grant)
        # An admin's new address is written now, between the answer and its keeping.
        async with services.db.write() as conn:
            await McpServerRepository().update_server(
                conn, team.team_id, added["id"], url=notes_url + "?moved=1", oauth=None
            )
        return fresh

    monkeypatch.setattr(mcp.oauth, "refresh", refreshed_as_the_address_changed)
    tested = await team.admin.call("mcp-servers-v1/test", {"id": added["id"]})
    assert tested["status"]["status"] == "signIn"
    assert "changed while its token was refreshed" in tested["status"]["reason"]
    # The new address has no sign-in: the old one's refreshed tokens were not put back.
    assert mcp.grant_of(await mcp.http_server(team.team_id, added["id"])) is None


@pytest.mark.sqlite_only
async def test_an_answer_with_another_state_is_refused(
    server: RunningHub, team: Team, oauth: FakeAuthorizationServer, notes_url: str
) -> None:
    oauth.answer_state = "forged"
    added = await add_guarded(team, notes_url)
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    await finish_in_tab(server, team, started["tabId"])
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="signIn")
    assert "state" in status["reason"]
    # The code was never exchanged.
    assert oauth.grants == []
    cancel = {"signInId": started["signInId"]}
    assert await refused(team.admin, "mcp-sign-in-v1/cancel", cancel) == "mcpSignInExpired"


@pytest.mark.sqlite_only
async def test_a_sign_in_expires_or_is_cancelled_and_its_tab_closes(
    server: RunningHub, team: Team, notes_url: str
) -> None:
    added = await add_guarded(team, notes_url)
    sign_ins = server.builtin.services.mcp_sign_ins
    engine = await server.builtin.services.browser.engine()
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    cancelled = await team.admin.call("mcp-sign-in-v1/cancel", {"signInId": started["signInId"]})
    assert cancelled == {"cancelled": True}
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="signIn")
    assert "cancelled" in status["reason"]
    assert started["tabId"] not in {tab.id for tab in engine.list_tabs(team.team_id)}

    sign_ins.expire_seconds = 0.5
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="signIn")
    while "expired" not in str(status["reason"]):
        status = await until(team.admin, "mcp-server-status", serverId=added["id"])
    assert started["tabId"] not in {tab.id for tab in engine.list_tabs(team.team_id)}
    cancel = {"signInId": started["signInId"]}
    assert await refused(team.admin, "mcp-sign-in-v1/cancel", cancel) == "mcpSignInExpired"


async def test_two_starts_at_once_leave_one_sign_in(
    server: RunningHub, team: Team, notes_url: str
) -> None:
    """The same person's second start replaces the first even while that one is still
    starting: one tab stays open, and the other sign-in is gone."""
    added = await add_guarded(team, notes_url)
    engine = await server.builtin.services.browser.engine()
    start = {"serverId": added["id"]}
    both = await asyncio.gather(
        team.admin.call("mcp-sign-in-v1/start", start),
        team.admin.call("mcp-sign-in-v1/start", start),
    )
    open_tabs = {tab.id for tab in engine.list_tabs(team.team_id)}
    [kept] = [started for started in both if started["tabId"] in open_tabs]
    [replaced] = [started for started in both if started is not kept]
    cancel = {"signInId": replaced["signInId"]}
    assert await refused(team.admin, "mcp-sign-in-v1/cancel", cancel) == "mcpSignInExpired"
    await team.admin.call("mcp-sign-in-v1/cancel", {"signInId": kept["signInId"]})


@pytest.mark.sqlite_only
async def test_a_server_without_oauth_and_another_team_are_refused(
    server: RunningHub, team: Team, notes_url: str, tmp_path: Path
) -> None:
    added = await add_guarded(team, notes_url)
    stdio = await team.admin.call(
        "mcp-servers-v1/add",
        {"name": "local", "transport": "stdio", "command": "true"},
    )
    assert await refused(team.admin, "mcp-sign-in-v1/start", {"serverId": stdio["id"]}) == (
        "mcpSignInNotNeeded"
    )
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})

    # Another team's owner cannot start, cancel or see this sign-in.
    async with other_team(server, tmp_path) as other:
        assert await refused(other, "mcp-sign-in-v1/start", {"serverId": added["id"]}) == (
            "mcpServerNotFound"
        )
        assert await refused(other, "mcp-sign-in-v1/cancel", {"signInId": started["signInId"]}) == (
            "mcpSignInExpired"
        )
        assert started["tabId"] not in json.dumps(await other.call("browser-control-v1/list_tabs"))
    await team.admin.call("mcp-sign-in-v1/cancel", {"signInId": started["signInId"]})


@contextlib.asynccontextmanager
async def other_team(server: RunningHub, tmp_path: Path) -> AsyncIterator[HostConnection]:
    """The owner of another team, on the same host."""
    await server.create_owner("other@example.com", "Team B")
    member = await peer_member(server, "other@example.com", tmp_path)
    connection = await member.connect(server.builtin.services.host_id)
    try:
        yield connection
    finally:
        await connection.close()
        await member.hub.close()


@pytest.mark.sqlite_only
async def test_an_answer_naming_another_issuer_or_none_when_promised_is_refused(
    server: RunningHub, team: Team, oauth: FakeAuthorizationServer, notes_url: str
) -> None:
    # The authorization server says its answers carry iss (RFC 9207).
    oauth.iss_supported = True
    added = await add_guarded(team, notes_url)

    async def sign_in() -> dict[str, Any]:
        started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
        await finish_in_tab(server, team, started["tabId"])
        return await until(team.admin, "mcp-server-status", serverId=added["id"])

    # A mix-up: the answer names another issuer.
    oauth.answer_iss = "https://other-issuer.example"
    status = await sign_in()
    assert status["status"] == "signIn"
    assert status["code"] == "mcpSignInIssuerMismatch"
    assert "https://other-issuer.example" in status["reason"]
    # No iss although the metadata promised it.
    oauth.answer_iss, oauth.omit_iss = None, True
    status = await sign_in()
    assert (status["status"], status["code"]) == ("signIn", "mcpSignInIssuerMismatch")
    assert "did not name its issuer" in status["reason"]
    # Neither code was exchanged, and the status says so on a read too.
    assert oauth.grants == []
    listed = await team.admin.call("mcp-servers-v1/list")
    assert listed["servers"][0]["status"]["code"] == "mcpSignInIssuerMismatch"

    # The answer naming its own issuer signs in.
    oauth.omit_iss = False
    status = await sign_in()
    while status["status"] != "connected":
        status = await until(team.admin, "mcp-server-status", serverId=added["id"])
    assert status["code"] is None
    assert oauth.grants == ["authorization_code"]


async def test_a_server_changed_or_deleted_during_its_sign_in_ends_it_without_tokens(
    server: RunningHub, team: Team, oauth: FakeAuthorizationServer, notes_url: str
) -> None:
    engine = await server.builtin.services.browser.engine()
    added = await add_guarded(team, notes_url)
    # A rename changes nothing the sign-in was made for: it goes on.
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    await team.admin.call("mcp-servers-v1/update", {"id": added["id"], "name": "wiki"})
    assert started["tabId"] in {tab.id for tab in engine.list_tabs(team.team_id)}

    # A new address ends it at once: its tab closes, the status says why.
    moved = {"id": added["id"], "transport": "http", "url": notes_url + "?moved=1"}
    await team.admin.call("mcp-servers-v1/update", moved)
    status = await until(team.admin, "mcp-server-status", serverId=added["id"], status="signIn")
    assert status["code"] == "mcpSignInServerChanged"
    assert "address or OAuth client changed" in status["reason"]
    assert started["tabId"] not in {tab.id for tab in engine.list_tabs(team.team_id)}
    cancel = {"signInId": started["signInId"]}
    assert await refused(team.admin, "mcp-sign-in-v1/cancel", cancel) == "mcpSignInExpired"
    assert oauth.grants == []

    # Deleted while the code is being exchanged: the exchange is dropped, nothing kept.
    started = await team.admin.call("mcp-sign-in-v1/start", {"serverId": added["id"]})
    oauth.hold_token = asyncio.Event()
    await finish_in_tab(server, team, started["tabId"])
    await oauth.token_asked.wait()
    assert oauth.grants == ["authorization_code"]
    await team.admin.call("mcp-servers-v1/delete", {"id": added["id"]})
    oauth.hold_token.set()
    cancel = {"signInId": started["signInId"]}
    assert await refused(team.admin, "mcp-sign-in-v1/cancel", cancel) == "mcpSignInExpired"
    assert started["tabId"] not in {tab.id for tab in engine.list_tabs(team.team_id)}
    assert (await team.admin.call("mcp-servers-v1/list"))["servers"] == []


async def test_a_server_that_registers_no_clients_signs_in_with_one_an_admin_entered(
    server: RunningHub,
    team: Team,
    oauth: FakeAuthorizationServer,
    notes_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    oauth.registration = False
    added = await add_guarded(team, notes_url)
    assert (added["oauthClientId"], added["oauthClientSecret"]) == (None, None)
    # Without a client, the admin is told to enter one.
    start = {"serverId": added["id"]}
    assert await refused(team.admin, "mcp-sign-in-v1/start", start) == "mcpSignInNeedsClient"

    # The admin registered a confidential client on the server's own pages.
    secret = "hand-entered-client-secret"
    client_id = oauth.add_client("http://127.0.0.1:33418/callback", secret)
    change = {"id": added["id"], "oauthClientId": client_id, "oauthClientSecret": secret}
    changed = await team.admin.call("mcp-servers-v1/update", change)
    assert (changed["oauthClientId"], changed["oauthClientSecret"]) == (client_id, "set")
    started = await team.admin.call("mcp-sign-in-v1/start", start)
    [query] = oauth.authorize_queries
    assert query["client_id"] == client_id
    await finish_in_tab(server, team, started["tabId"])
    await until(team.admin, "mcp-server-status", serverId=added["id"], status="connected")
    # The code was exchanged by the entered client, its secret in HTTP Basic.
    assert oauth.grants == ["authorization_code"]
    assert oauth.client_auth == ["basic"]
    assert set(oauth.clients) == {client_id}

    # The secret is in no answer, log line or database file.
    listed = json.dumps(await team.member.call("mcp-servers-v1/list"))
    assert client_id in listed
    for text in (listed, json.dumps(changed), caplog.text):
        assert secret not in text
    assert secret.encode() not in database_bytes(tmp_path)

    # Moved to another host (or from https to http), the saved secret is not sent there:
    # the admin gives it again.
    moved = {
        "id": added["id"],
        "transport": "http",
        "url": notes_url.replace("127.0.0.1", "localhost"),
    }
    assert await refused(team.admin, "mcp-servers-v1/update", moved) == "secretNeedsReentry"
    assert (await team.admin.call("mcp-servers-v1/list"))["servers"][0]["url"] == notes_url

    # A new secret drops the sign-in; clearing the id clears both.
    change = {"id": added["id"], "oauthClientSecret": "another-secret"}
    await team.admin.call("mcp-servers-v1/update", change)
    tested = await team.admin.call("mcp-servers-v1/test", {"id": added["id"]})
    assert tested["status"]["status"] == "signIn"
    cleared = await team.admin.call(
        "mcp-servers-v1/update", {"id": added["id"], "oauthClientId": ""}
    )
    assert (cleared["oauthClientId"], cleared["oauthClientSecret"]) == (None, None)


@pytest.mark.sqlite_only
async def test_an_oauth_client_is_refused_where_it_cannot_be_used(
    server: RunningHub, team: Team, notes_url: str
) -> None:
    stdio = {"name": "local", "transport": "stdio", "command": "true", "oauthClientId": "abc"}
    assert await refused(team.admin, "mcp-servers-v1/add", stdio) == "invalidArgument"
    added = await add_guarded(team, notes_url)
    lone_secret = {"id": added["id"], "oauthClientSecret": "s"}
    assert await refused(team.admin, "mcp-servers-v1/update", lone_secret) == "invalidArgument"
    spaced = {"id": added["id"], "oauthClientId": "an id"}
    assert await refused(team.admin, "mcp-servers-v1/update", spaced) == "invalidArgument"
    # Moving the server to stdio drops its client.
    client = {"id": added["id"], "oauthClientId": "abc", "oauthClientSecret": "s"}
    await team.admin.call("mcp-servers-v1/update", client)
    moved = await team.admin.call(
        "mcp-servers-v1/update", {"id": added["id"], "transport": "stdio", "command": "true"}
    )
    assert (moved["oauthClientId"], moved["oauthClientSecret"]) == (None, None)
