"""Two hub instances on one PostgreSQL: an outside agent reaches, through hub B, the host
linked to hub A. The request and its answer cross on the bus in pieces (NOTIFY carries
7,900 bytes at most); a token revoked on B ends the sessions A relayed for it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from server.host.agents.mcp_endpoint import BROWSER_TOOLS, LIVE_VIEW_LINK
from server.hub.bus import MAX_PAYLOAD
from tests.support.databases import ScratchDatabase, scratch_postgres_database
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.peers import wait_linked
from tests.support.sites import pages_app, serving
from tests.support.waiting import eventually

PAGE = "<!doctype html><title>Far</title><h1>Reached through another hub</h1>"


@pytest.fixture
async def hubs(tmp_path: Path) -> AsyncIterator[tuple[RunningHub, RunningHub]]:
    """Hub A with the built-in host linked to it, and hub B with no link at all."""
    async with scratch_postgres_database() as url:
        database = ScratchDatabase(url, None)
        async with (
            running_hub(hub_settings(tmp_path / "a", database), database) as hub_a,
            running_hub(hub_settings(tmp_path / "b", database), database, with_host=False) as b,
        ):
            yield hub_a, b


@asynccontextmanager
async def mcp_session(url: str, secret: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def payload(result: types.CallToolResult) -> Any:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


async def approving(hub_a: RunningHub, team_id: str, account_id: str, call: Any) -> Any:
    """Run ``call`` and approve the consent it raises on the host, as its member would."""
    attention = hub_a.builtin.services.attention
    task = asyncio.ensure_future(call)
    while not task.done():
        for request in attention.list_requests(team_id, account_id):
            attention.answer(team_id, account_id, request.id, approve=True)
        await asyncio.sleep(0.01)
    return task.result()


async def test_an_outside_agent_on_hub_b_uses_the_host_linked_to_hub_a(
    hubs: tuple[RunningHub, RunningHub],
) -> None:
    hub_a, hub_b = hubs
    owner = await hub_a.sign_up_owner()
    team_id = await hub_a.first_team_id(owner)
    assert owner.account_id is not None
    host_id = await wait_linked(hub_a)
    assert not hub_b.hub.links.is_linked_here(host_id)
    on_b = await hub_b.sign_in("owner@example.com")
    made = await on_b.post(f"/v1/teams/{team_id}/access-tokens", {"name": "far", "hostId": host_id})
    token_id, secret = made.body["token"]["id"], made.body["secret"]
    services = hub_a.builtin.services
    async with (
        serving(pages_app({"/far": PAGE})) as site,
        mcp_session(hub_b.url + "/v1/mcp", secret) as session,
    ):
        # The tool list is an answer of many bus pieces.
        listed = await session.list_tools()
        assert len(listed.model_dump_json()) > MAX_PAYLOAD
        assert [t.name for t in listed.tools] == [*BROWSER_TOOLS, LIVE_VIEW_LINK]
        # A request of many pieces: an argument longer than a bus message.
        long = await session.call_tool("snapshot", {"tabId": "x" * 3 * MAX_PAYLOAD})
        assert long.is_error
        opened = await approving(
            hub_a,
            team_id,
            owner.account_id,
            session.call_tool("open", {"url": site.url("/far")}),
        )
        tab_id = payload(opened)["tabId"]
        snapshot = payload(await session.call_tool("snapshot", {"tabId": tab_id}))
        assert "Reached through another hub" in json.dumps(snapshot)
        assert services.mcp_endpoint.session_count(token_id) == 1

        # Revoked through hub B: the session A relayed ends on the host.
        revoked = await on_b.delete(f"/v1/teams/{team_id}/access-tokens/{token_id}")
        assert revoked.status == 204
        await eventually(lambda: services.mcp_endpoint.session_count(token_id) == 0)
        with pytest.raises(MCPError):
            await session.call_tool("list_tabs", {}, read_timeout_seconds=10)
    # What the host reported reaches the audit list (A keeps it a moment after the answer).
    async with asyncio.timeout(20):
        while True:
            uses = (await on_b.get(f"/v1/teams/{team_id}/access-token-uses")).body["uses"]
            if {("open", "ok"), ("snapshot", "ok")} <= {(u["tool"], u["outcome"]) for u in uses}:
                break
            await asyncio.sleep(0.05)


async def test_a_member_removed_on_hub_a_loses_the_session_opened_through_hub_b(
    hubs: tuple[RunningHub, RunningHub],
) -> None:
    hub_a, hub_b = hubs
    owner = await hub_a.sign_up_owner()
    team_id = await hub_a.first_team_id(owner)
    host_id = await wait_linked(hub_a)
    member = await hub_a.invite(owner, team_id, "leaver@example.com", "member")
    made = await member.post(
        f"/v1/teams/{team_id}/access-tokens", {"name": "far", "hostId": host_id}
    )
    token_id, secret = made.body["token"]["id"], made.body["secret"]
    services = hub_a.builtin.services
    async with mcp_session(hub_b.url + "/v1/mcp", secret) as session:
        assert payload(await session.call_tool("list_tabs", {}))["tabs"] == []
        assert services.mcp_endpoint.session_count(token_id) == 1
        removed = await owner.delete(f"/v1/teams/{team_id}/members/{member.account_id}")
        assert removed.status == 204
        await eventually(lambda: services.mcp_endpoint.session_count(token_id) == 0)
        with pytest.raises(MCPError):
            await session.call_tool("list_tabs", {}, read_timeout_seconds=10)
