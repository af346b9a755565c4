"""Outside agents use the team's browsers through ``/v1/mcp``: the MCP SDK's own client
against a real hub, its built-in host and Chromium, with a member's access token.

A gated call waits for the token's member, who answers through the attention route over
a real peer connection; a session sees no other session's tabs; a revoked token ends
its sessions; a forged or expired one is refused with a clear code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import httpx2
import pytest
import pytest_asyncio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from peer.connection import HostConnection
from server.host.agents.mcp_endpoint import BROWSER_TOOLS, LIVE_VIEW_LINK, SESSION_IDLE_SECONDS
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.hub_server import ApiClient, RunningHub, hub_settings, running_hub
from tests.support.loop_watch import watch_event_loop
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

T = TypeVar("T")
EVENT_SECONDS = 20.0
PAGE = """<!doctype html><title>Basket</title>
<h1>Basket</h1>
<button onclick="document.getElementById('state').textContent='Emptied'">Empty basket</button>
<p id="state">Full</p>"""


@dataclass
class Endpoint:
    server: RunningHub
    clock: FakeClock
    team_id: str
    host_id: str
    owner: ApiClient
    # The owner's peer connection: where the approvals of their tokens' calls arrive.
    approver: HostConnection
    site: Site
    provider: FakeAnthropic

    @property
    def url(self) -> str:
        return self.server.url + "/v1/mcp"

    async def token(self, **fields: Any) -> tuple[str, str]:
        """A new access token of the owner's: its id and its secret."""
        body = {"name": "laptop agent", "hostId": self.host_id, **fields}
        reply = await self.owner.post(f"/v1/teams/{self.team_id}/access-tokens", body)
        assert reply.status == 201, reply.body
        return reply.body["token"]["id"], reply.body["secret"]


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def endpoint(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Endpoint]:
    folder = tmp_path_factory.mktemp("mcp")
    clock = FakeClock()
    async with (
        scratch_database("sqlite", folder) as database,
        serving(pages_app({"/basket": PAGE})) as site,
        FakeAnthropic() as provider,
        running_hub(hub_settings(folder, database), database, clock=clock) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        host_id = await wait_linked(server)
        member = await peer_member(server, "owner@example.com", folder)
        approver = await member.connect(host_id)
        await approver.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": provider.base_url}
        )
        await approver.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        await approver.call("agents-v1/create", {"name": "Scout"})
        yield Endpoint(server, clock, team_id, host_id, owner, approver, site, provider)
        await approver.close()
        await member.hub.close()


@asynccontextmanager
async def mcp_session(url: str, secret: str) -> AsyncIterator[ClientSession]:
    """An MCP session as an outside agent opens one: Streamable HTTP and a bearer header."""
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def payload(result: types.CallToolResult) -> dict[str, Any]:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    answer = json.loads(block.text)
    assert isinstance(answer, dict)
    return answer


async def answered(
    endpoint: Endpoint, call: Awaitable[T], *, approve: bool, tool: str
) -> tuple[T, dict[str, Any]]:
    """Run ``call`` while the owner answers the approval it raises; its result and the
    request the owner saw."""
    task = asyncio.ensure_future(call)
    async with asyncio.timeout(EVENT_SECONDS):
        while True:
            event = await endpoint.approver.events.get()
            if event["event"] == "attention-requested" and event["data"]["tool"] == tool:
                asked = dict(event["data"])
                break
    assert not task.done(), "the call did not wait for its approval"
    [listed] = [
        r
        for r in (await endpoint.approver.call("attention-v1/list", {}))["requests"]
        if r["id"] == asked["id"]
    ]
    assert listed["kind"] == "consent"
    await endpoint.approver.call("attention-v1/answer", {"id": asked["id"], "approve": approve})
    return await asyncio.wait_for(task, EVENT_SECONDS), asked


async def open_basket(endpoint: Endpoint, session: ClientSession) -> str:
    """Open the fixture page in the session (approved); the new tab's id."""
    opened, _ = await answered(
        endpoint,
        session.call_tool("open", {"url": endpoint.site.url("/basket")}),
        approve=True,
        tool="open",
    )
    assert not opened.is_error, opened.content
    tab_id = payload(opened)["tabId"]
    assert isinstance(tab_id, str)
    return tab_id


async def audited(endpoint: Endpoint, *entries: tuple[str, str]) -> None:
    """The team's audit list comes to show ``entries`` (tool, outcome): the host reports
    each call through its outbox as it ends, a moment after the MCP answer."""
    async with asyncio.timeout(20):
        while True:
            uses = await endpoint.owner.get(f"/v1/teams/{endpoint.team_id}/access-token-uses")
            if set(entries) <= {(u["tool"], u["outcome"]) for u in uses.body["uses"]}:
                return
            await asyncio.sleep(0.05)


async def test_an_outside_agent_lists_tools_opens_a_page_and_reads_it(endpoint: Endpoint) -> None:
    _, secret = await endpoint.token()
    async with mcp_session(endpoint.url, secret) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names == [*BROWSER_TOOLS, LIVE_VIEW_LINK]
        assert payload(await session.call_tool("list_tabs", {}))["tabs"] == []
        tab_id = await open_basket(endpoint, session)
        snapshot = payload(await session.call_tool("snapshot", {"tabId": tab_id}))
        assert "Empty basket" in json.dumps(snapshot)
        [tab] = payload(await session.call_tool("list_tabs", {}))["tabs"]
        assert tab["tabId"] == tab_id
        link = payload(await session.call_tool(LIVE_VIEW_LINK, {"tabId": tab_id}))
        # A whole address (the hub has no public URL set: the one the agent reached).
        assert link["url"] == (
            f"{endpoint.server.url}/app/teams/{endpoint.team_id}/hosts/{endpoint.host_id}/tabs"
        )
    await audited(endpoint, ("open", "ok"), ("snapshot", "ok"))


async def test_a_gated_click_waits_for_the_member_and_runs_once_approved(
    endpoint: Endpoint,
) -> None:
    _, secret = await endpoint.token()
    async with mcp_session(endpoint.url, secret) as session:
        tab_id = await open_basket(endpoint, session)
        snapshot = payload(await session.call_tool("snapshot", {"tabId": tab_id}))
        [ref] = [
            line.split()[0]
            for line in snapshot["tree"].splitlines()
            if 'button "Empty basket"' in line
        ]
        clicked, asked = await answered(
            endpoint,
            session.call_tool("click", {"tabId": tab_id, "target": ref}),
            approve=True,
            tool="click",
        )
        assert "Empty basket" in asked["description"]
        assert not clicked.is_error, clicked.content
        after = payload(await session.call_tool("snapshot", {"tabId": tab_id}))
        assert "Emptied" in json.dumps(after)


async def test_a_denied_call_is_refused_and_not_made(endpoint: Endpoint) -> None:
    _, secret = await endpoint.token()
    async with mcp_session(endpoint.url, secret) as session:
        refused, _ = await answered(
            endpoint,
            session.call_tool("open", {"url": endpoint.site.url("/basket")}),
            approve=False,
            tool="open",
        )
        assert refused.is_error
        assert payload(refused)["error"]["code"] == "callRefused"
        assert payload(await session.call_tool("list_tabs", {}))["tabs"] == []
    await audited(endpoint, ("open", "refused"))


async def test_a_gated_call_that_cannot_be_asked_is_a_failed_result_and_audited(
    endpoint: Endpoint,
) -> None:
    """A click whose target is a reference and a selector at once cannot be put to the
    member: its answer is the refusal, as a failed result, and nobody is asked."""
    _, secret = await endpoint.token()
    async with mcp_session(endpoint.url, secret) as session:
        tab_id = await open_basket(endpoint, session)
        both = {"tabId": tab_id, "target": {"ref": "e1", "selector": "#empty"}}
        failed = await session.call_tool("click", both)
        assert failed.is_error
        error = payload(failed)["error"]
        assert error["code"] == "ambiguousTarget"
        assert "several kinds" in error["message"]
        assert not any(
            r["tool"] == "click"
            for r in (await endpoint.approver.call("attention-v1/list", {}))["requests"]
        )
    await audited(endpoint, ("click", "error"))


async def test_a_session_sees_no_other_sessions_tabs(endpoint: Endpoint) -> None:
    _, secret = await endpoint.token()
    async with (
        mcp_session(endpoint.url, secret) as first,
        mcp_session(endpoint.url, secret) as second,
    ):
        tab_id = await open_basket(endpoint, first)
        assert payload(await second.call_tool("list_tabs", {}))["tabs"] == []
        other = payload(await second.call_tool("snapshot", {"tabId": tab_id}))
        assert other["error"]["code"] == "tabNotFound"
        closing = payload(await second.call_tool("close_tab", {"tabId": tab_id}))
        assert closing["error"]["code"] == "tabNotFound"
        assert [t["tabId"] for t in payload(await first.call_tool("list_tabs", {}))["tabs"]] == [
            tab_id
        ]


async def test_ask_agent_streams_the_agents_words_as_progress(endpoint: Endpoint) -> None:
    _, browser_only = await endpoint.token()
    async with mcp_session(endpoint.url, browser_only) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert "ask_agent" not in names
        refused = payload(await session.call_tool("ask_agent", {"agent": "Scout", "message": "Hi"}))
        assert refused["error"]["code"] == "unknownTool"
    _, secret = await endpoint.token(scope="browser+agents")
    endpoint.provider.script(
        MessageEvents().text("The basket ", "holds three items.").stop().reply()
    )
    streamed: list[str] = []

    async def heard(progress: float, total: float | None, message: str | None) -> None:
        assert total is None
        assert progress > 0
        streamed.append(message or "")

    async with mcp_session(endpoint.url, secret) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names[-1] == "ask_agent"
        asked = await session.call_tool(
            "ask_agent",
            {"agent": "scout", "message": "What is in the basket?"},
            progress_callback=heard,
        )
        answer = payload(asked)
        assert not asked.is_error, answer
        assert (answer["status"], answer["answer"]) == ("done", "The basket holds three items.")
        assert "".join(streamed) == "The basket holds three items."
        nobody = payload(await session.call_tool("ask_agent", {"agent": "Nobody", "message": "x"}))
        assert nobody["error"]["code"] == "agentNotFound"
    [request] = endpoint.provider.requests
    assert "What is in the basket?" in json.dumps(request.messages())
    thread = await endpoint.approver.call("threads-v1/get", {"threadId": answer["threadId"]})
    assert thread["thread"]["shared"] is False


async def test_a_session_answers_only_the_token_that_opened_it(endpoint: Endpoint) -> None:
    _, mine = await endpoint.token()
    _, theirs = await endpoint.token()
    headers = {"Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    opened = await endpoint.server.client(bearer=mine).post("/v1/mcp", initialize, headers=headers)
    assert opened.status == 200, opened.raw
    session_id = opened.headers["Mcp-Session-Id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    borrowed = await endpoint.server.client(bearer=theirs).post(
        "/v1/mcp",
        call,
        headers={**headers, "Mcp-Session-Id": session_id, "Mcp-Protocol-Version": "2025-11-25"},
    )
    assert borrowed.status == 404
    assert b"Session not found" in borrowed.raw


async def test_a_forged_token_is_refused_with_a_clear_code(endpoint: Endpoint) -> None:
    client = endpoint.server.client()
    for bearer, code in (
        ("crh_pat_" + "x" * 43, "accessTokenInvalid"),
        ("not-a-token", "accessTokenInvalid"),
    ):
        client.bearer = bearer
        reply = await client.post("/v1/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert (reply.status, reply.code) == (401, code)
        assert reply.headers["WWW-Authenticate"].startswith("Bearer")
    client.bearer = None
    reply = await client.request(
        "POST", "/v1/mcp", data="{}", headers={"Content-Type": "application/json"}
    )
    assert (reply.status, reply.code) == (401, "accessTokenInvalid")


async def test_a_revoked_token_ends_its_session(endpoint: Endpoint) -> None:
    token_id, secret = await endpoint.token()
    services = endpoint.server.builtin.services
    async with mcp_session(endpoint.url, secret) as session:
        assert payload(await session.call_tool("list_tabs", {}))["tabs"] == []
        assert services.mcp_endpoint.session_count(token_id) == 1
        revoked = await endpoint.owner.delete(
            f"/v1/teams/{endpoint.team_id}/access-tokens/{token_id}"
        )
        assert revoked.status == 204, revoked.body
        with pytest.raises(MCPError):
            await session.call_tool("list_tabs", {}, read_timeout_seconds=10)
        await eventually(lambda: services.mcp_endpoint.session_count(token_id) == 0)
    client = endpoint.server.client(bearer=secret)
    reply = await client.post("/v1/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert (reply.status, reply.code) == (401, "accessTokenRevoked")


async def test_an_expired_token_ends_its_session_and_is_refused(endpoint: Endpoint) -> None:
    token_id, secret = await endpoint.token(expiresInDays=1)
    async with mcp_session(endpoint.url, secret) as session:
        assert payload(await session.call_tool("list_tabs", {}))["tabs"] == []
        services = endpoint.server.builtin.services
        assert services.mcp_endpoint.session_count(token_id) == 1
        endpoint.clock.advance(86400 + 1)
        await eventually(lambda: services.mcp_endpoint.session_count(token_id) == 0)
    client = endpoint.server.client(bearer=secret)
    reply = await client.post("/v1/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert (reply.status, reply.code) == (401, "accessTokenExpired")


PROTOCOL = "2025-11-25"


class RawClient:
    """An MCP client over plain HTTP, for what a test does that a client does not choose
    to: drop a stream halfway, hold a stream open."""

    def __init__(self, url: str, secret: str) -> None:
        self.url = url
        self.http = aiohttp.ClientSession()
        self.headers = {
            "Authorization": f"Bearer {secret}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Mcp-Protocol-Version": PROTOCOL,
        }

    async def initialize(self) -> None:
        opening = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        async with self.http.post(self.url, json=opening, headers=self.headers) as opened:
            assert opened.status == 200, await opened.text()
            self.headers["Mcp-Session-Id"] = opened.headers["Mcp-Session-Id"]
            async for _, data in sse_events(opened):
                if data:
                    break
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.http.post(self.url, json=ready, headers=self.headers) as told:
            assert told.status == 202

    def call(
        self, call_id: int, tool: str, arguments: dict[str, Any], *, progress: bool = False
    ) -> Any:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if progress:
            params["_meta"] = {"progressToken": f"progress-{call_id}"}
        body = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params}
        return self.http.post(self.url, json=body, headers=self.headers)

    def resume(self, last_event_id: str) -> Any:
        return self.http.get(self.url, headers={**self.headers, "Last-Event-ID": last_event_id})

    def listen(self) -> Any:
        return self.http.get(self.url, headers=self.headers)

    async def close(self) -> None:
        await self.http.close()


async def sse_events(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str | None, str]]:
    """The server-sent events of a response as (id, data), until it ends."""
    event_id: str | None = None
    data: list[str] = []
    async for raw in response.content:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line and (event_id is not None or data):
            yield event_id, "\n".join(data)
            event_id, data = None, []


async def test_a_dropped_stream_resumes_and_the_result_arrives_once(endpoint: Endpoint) -> None:
    """The client's stream drops while its call waits for approval; it reconnects with
    Last-Event-ID and gets the call's result, once."""
    _, secret = await endpoint.token()
    client = RawClient(endpoint.url, secret)
    try:
        await client.initialize()
        call = client.call(7, "open", {"url": endpoint.site.url("/basket")})
        async with call as waiting:
            assert waiting.headers["Content-Type"].startswith("text/event-stream")
            # The first event primes the stream: its id is where a reconnect resumes.
            primed, _ = await anext(sse_events(waiting))
            assert primed is not None
        # The stream is gone; the call still waits for its member.
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                event = await endpoint.approver.events.get()
                if event["event"] == "attention-requested" and event["data"]["tool"] == "open":
                    break
        await endpoint.approver.call(
            "attention-v1/answer", {"id": event["data"]["id"], "approve": True}
        )
        results: list[dict[str, Any]] = []
        async with asyncio.timeout(EVENT_SECONDS):
            while not results:
                async with client.resume(primed) as resumed:
                    assert resumed.status == 200
                    async for message in _messages(sse_events(resumed)):
                        if message.get("id") == 7:
                            results.append(message)
                            break
        [result] = results
        answer = json.loads(result["result"]["content"][0]["text"])
        assert isinstance(answer["tabId"], str), answer
        # A reconnect from the result on finds nothing more of that call.
        async with client.resume(primed) as again:
            replayed = [m async for m in _until_result(sse_events(again), 7)]
        assert [m.get("id") for m in replayed if "result" in m] == [7]
    finally:
        await client.close()


async def _messages(events: AsyncIterator[tuple[str | None, str]]) -> AsyncIterator[Any]:
    """The JSON-RPC messages of a stream (a priming event has none)."""
    async for _, data in events:
        if data:
            yield json.loads(data)


async def _until_result(
    events: AsyncIterator[tuple[str | None, str]], call_id: int
) -> AsyncIterator[Any]:
    async for message in _messages(events):
        yield message
        if message.get("id") == call_id:
            return


async def test_another_sessions_event_id_resumes_nothing(endpoint: Endpoint) -> None:
    _, secret = await endpoint.token()
    first, second = RawClient(endpoint.url, secret), RawClient(endpoint.url, secret)
    try:
        await first.initialize()
        await second.initialize()
        async with first.call(1, "list_tabs", {}, progress=True) as answered:
            assert answered.headers["Content-Type"].startswith("text/event-stream")
            ids = [i async for i, d in sse_events(answered) if i is not None and d]
        async with second.resume(ids[-1]) as borrowed:
            assert borrowed.status == 200
            assert [e async for e in sse_events(borrowed)] == []
    finally:
        await first.close()
        await second.close()


async def test_a_quick_call_is_answered_as_one_json_object(endpoint: Endpoint) -> None:
    """A call that waits for no one and asks for no progress comes back as plain JSON,
    the same answer the event stream carries; a gated call still streams."""
    _, secret = await endpoint.token()
    client = RawClient(endpoint.url, secret)
    try:
        await client.initialize()
        async with client.call(3, "list_tabs", {}) as quick:
            assert quick.status == 200
            assert quick.headers["Content-Type"] == "application/json"
            assert quick.headers["Mcp-Session-Id"] == client.headers["Mcp-Session-Id"]
            message = await quick.json()
        assert (message["jsonrpc"], message["id"], message["result"]["isError"]) == (
            "2.0",
            3,
            False,
        )
        assert json.loads(message["result"]["content"][0]["text"]) == {"tabs": []}
        async with client.call(4, "list_tabs", {}, progress=True) as streamed:
            assert streamed.headers["Content-Type"].startswith("text/event-stream")
            [same] = [m async for m in _until_result(sse_events(streamed), 4)]
        assert same["result"] == message["result"]
        async with client.call(5, "no_such_tool", {}) as unknown:
            assert unknown.headers["Content-Type"].startswith("text/event-stream")
            [refused] = [m async for m in _until_result(sse_events(unknown), 5)]
        assert "unknownTool" in refused["result"]["content"][0]["text"]
        await audited(endpoint, ("list_tabs", "ok"), ("list_tabs", "ok"))
    finally:
        await client.close()


async def test_a_call_nested_deeper_than_json_is_read_is_answered(endpoint: Endpoint) -> None:
    """A body nested too deep to read is no quick call: the session manager answers it as
    it answers any body it cannot parse, at once, and the session goes on."""
    _, secret = await endpoint.token()
    client = RawClient(endpoint.url, secret)
    try:
        await client.initialize()
        depth = 50_000
        body = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "x": '
        body += "[" * depth + "]" * depth + "}"
        async with client.http.post(client.url, data=body, headers=client.headers) as deep:
            assert deep.status == 400
        async with client.call(2, "list_tabs", {}) as quick:
            assert quick.status == 200
    finally:
        await client.close()


async def test_a_quick_call_after_the_session_ended_is_not_found(endpoint: Endpoint) -> None:
    _, secret = await endpoint.token()
    client = RawClient(endpoint.url, secret)
    try:
        await client.initialize()
        async with client.http.delete(client.url, headers=client.headers) as ended:
            assert ended.status == 200
        async with client.call(1, "list_tabs", {}) as late:
            assert late.status == 404
            assert (await late.json())["error"]["message"] == "Session not found"
    finally:
        await client.close()


async def test_a_removed_members_open_stream_and_sessions_end_at_once(
    endpoint: Endpoint,
) -> None:
    server, team_id = endpoint.server, endpoint.team_id
    member = await server.invite(endpoint.owner, team_id, "leaver@example.com", "member")
    made = await member.post(
        f"/v1/teams/{team_id}/access-tokens", {"name": "leaver", "hostId": endpoint.host_id}
    )
    token_id, secret = made.body["token"]["id"], made.body["secret"]
    services = server.builtin.services
    client = RawClient(endpoint.url, secret)
    try:
        await client.initialize()
        async with client.listen() as stream:
            assert stream.status == 200
            assert services.mcp_endpoint.session_count(token_id) == 1
            removed = await endpoint.owner.delete(
                f"/v1/teams/{team_id}/members/{member.account_id}"
            )
            assert removed.status == 204, removed.body
            async with asyncio.timeout(1.0):
                assert [e async for e in sse_events(stream)] == []
        await eventually(lambda: services.mcp_endpoint.session_count(token_id) == 0)
    finally:
        await client.close()
    refused = await server.client(bearer=secret).post(
        "/v1/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert (refused.status, refused.code) == (401, "accessTokenRevoked")


async def test_a_role_change_ends_the_members_sessions(endpoint: Endpoint) -> None:
    """A session carries the role it was opened with: it ends, the token opens another."""
    server, team_id = endpoint.server, endpoint.team_id
    member = await server.invite(endpoint.owner, team_id, "promoted@example.com", "member")
    made = await member.post(
        f"/v1/teams/{team_id}/access-tokens", {"name": "promoted", "hostId": endpoint.host_id}
    )
    token_id, secret = made.body["token"]["id"], made.body["secret"]
    services = server.builtin.services
    async with mcp_session(endpoint.url, secret) as session:
        assert payload(await session.call_tool("list_tabs", {}))["tabs"] == []
        assert services.mcp_endpoint.session_count(token_id) == 1
        changed = await endpoint.owner.patch(
            f"/v1/teams/{team_id}/members/{member.account_id}", {"role": "admin"}
        )
        assert changed.status == 200, changed.body
        await eventually(lambda: services.mcp_endpoint.session_count(token_id) == 0)
    async with mcp_session(endpoint.url, secret) as again:
        assert payload(await again.call_tool("list_tabs", {}))["tabs"] == []


async def test_a_session_left_idle_ends_and_one_in_use_does_not(endpoint: Endpoint) -> None:
    """Quick calls keep a session alive as streamed ones do; one nobody used for the idle
    time ends, its next call answered 404 (the client opens another)."""
    _, secret = await endpoint.token()
    idle, busy = RawClient(endpoint.url, secret), RawClient(endpoint.url, secret)
    mcp_endpoint = endpoint.server.builtin.services.mcp_endpoint
    try:
        await idle.initialize()
        await busy.initialize()
        endpoint.clock.advance(SESSION_IDLE_SECONDS - 60)
        async with busy.call(1, "list_tabs", {}) as used:
            assert used.status == 200
        endpoint.clock.advance(120)
        await mcp_endpoint.end_idle_sessions()
        async with idle.call(2, "list_tabs", {}) as ended:
            assert ended.status == 404
        async with busy.call(3, "list_tabs", {}) as alive:
            assert alive.status == 200
    finally:
        await idle.close()
        await busy.close()
