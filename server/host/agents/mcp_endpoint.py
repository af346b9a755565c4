"""The MCP endpoint's host half: the sessions of outside agents that use the team's
browsers with a member's personal access token.

The hub relays each HTTP request to ``/v1/mcp`` over the link (``mcp-request``), its
token checked; here the MCP SDK's own Streamable HTTP session manager serves it, as an
ASGI request, and its answer goes back in pieces (``mcp-response-start``, then
``mcp-response-body`` until ``more`` is false). The tools are the catalog's browser
tools, run through ``call_tool`` with the same safety contract; each session is a caller
of its own (its id stands where an agent's would), so it reaches only the tabs it opened.
A gated call asks the token's member through the attention registry and waits.

Each session's stream events are kept a while (``McpEventStore``): a client whose stream
dropped reconnects with ``Last-Event-ID`` and gets what it missed, a call's result once.

A call that streams nothing and waits for no person (a tool that is not gated, asked
without a progress token) is answered here as one JSON object, as the transport allows
for any request: the SDK's event stream per request (a task group, its tasks and memory
streams) was most of such a call's cost. Everything else goes through the SDK. A session
ends after ``SESSION_IDLE_SECONDS`` with no request, whichever path served it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import EventStore
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from server import __version__
from server.common.clock import Clock
from server.common.errors import CrewhostError
from server.common.json_text import read_json
from server.common.protocol.link import (
    MAX_MCP_PIECE,
    LinkMcpRequest,
    LinkMcpResponse,
    LinkMcpResponseBody,
    LinkMcpResponseStart,
    LinkMcpToolUsed,
    McpCaller,
)
from server.host.agents.attention import AttentionRegistry
from server.host.agents.hub_outbox import HubOutbox
from server.host.agents.mcp_events import McpEventStore
from server.host.agents.threads import ThreadService
from server.host.browser.access import agent_reaches
from server.host.browser.callers import Caller
from server.host.services.agents import AgentService
from server.host.tools.catalog import CATALOG, call_tool, describe_call
from server.host.tools.context import ToolContextFactory
from server.host.tools.page.approval import Approval
from server.host.tools.repair import repair_arguments

log = logging.getLogger(__name__)

# The catalog's tools an outside agent may call, in the order it reads them.
BROWSER_TOOLS = (
    "list_tabs",
    "open",
    "navigate",
    "snapshot",
    "click",
    "type",
    "fill_fields",
    "select_option",
    "press",
    "scroll",
    "wait_for",
    "get_tab_content",
    "close_tab",
)
LIVE_VIEW_LINK = "live_view_link"
ASK_AGENT = "ask_agent"
ASK_AGENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "maxLength": 200, "description": "The agent's name or id."},
        "message": {"type": "string", "minLength": 1, "maxLength": 20_000},
    },
    "required": ["agent", "message"],
    "additionalProperties": False,
}
# How often a running turn's text is read for the progress notifications.
ANSWER_TICK = 0.25
LIVE_VIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"tabId": {"type": "string", "description": "A tab of this session's."}},
    "required": ["tabId"],
    "additionalProperties": False,
}
_CALLER_KEY = "crewhost_caller"
_TABS_URL_KEY = "crewhost_tabs_url"
SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = "mcp-protocol-version"
# A session no request has used for this long ends (its tabs with it).
SESSION_IDLE_SECONDS = 30 * 60.0
# The tools a quick call may name: they neither wait for a person nor stream.
QUICK_TOOLS = frozenset(
    [name for name in BROWSER_TOOLS if not CATALOG[name].gated] + [LIVE_VIEW_LINK]
)

Send = Callable[[Any], Awaitable[None]]


class _SessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, each session's events kept apart.

    The SDK hands its one ``event_store`` to every session it opens, and a stream's id is
    the client's JSON-RPC request id, which two sessions may share: each session must get
    a store of its own. The manager reads ``event_store`` as it opens each session, so
    here that read answers a new session's view of the host's store."""

    def __init__(self, server: Server[Any], events: McpEventStore) -> None:
        self._events = events
        # Sessions' idle time is the endpoint's to keep: quick calls never reach the SDK.
        super().__init__(app=server, json_response=False, session_idle_timeout=None)

    @property
    def event_store(self) -> EventStore:
        return self._events.for_session()

    @event_store.setter
    def event_store(self, _value: EventStore | None) -> None:
        """The SDK's constructor sets it (to None here): the views come from ``_events``."""


@dataclass(eq=False)
class _Session:
    """An open MCP session: the token it was opened with, and whether it is in use."""

    caller: McpCaller
    idle_since: float
    in_flight: int = 0


@dataclass(frozen=True, slots=True)
class _QuickCall:
    """A ``tools/call`` answered without the SDK: one JSON object, nothing streamed."""

    call_id: str | int
    name: str
    arguments: dict[str, Any]


class McpEndpoint:
    """Serves the relayed MCP requests of this host's teams."""

    def __init__(
        self,
        tool_contexts: ToolContextFactory,
        attention: AttentionRegistry,
        outbox: HubOutbox,
        agents: AgentService,
        threads: ThreadService,
        clock: Clock,
        *,
        public_url: str | None,
    ) -> None:
        self._tool_contexts = tool_contexts
        self._clock = clock
        self._agents = agents
        self._threads = threads
        self._attention = attention
        self._outbox = outbox
        self._public_url = (public_url or "").rstrip("/")
        self._server: Server[Any] = Server(
            "crewhost",
            version=__version__,
            instructions=(
                "The browser tools of a Crewhost team. Inspect (snapshot) before acting; "
                "an action that commits something may wait for a person's approval."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        # The SDK wraps each message in a tracing span by default; the host exports no
        # traces, and on a call as small as list_tabs the span was a tenth of its time.
        self._server.middleware = []
        # The SDK checks Host and Origin against DNS rebinding when asked to; here the hub
        # is the only client and checks the bearer itself.
        self._manager = _SessionManager(self._server, McpEventStore())
        self._sessions: dict[str, _Session] = {}
        self._requests: dict[str, asyncio.Task[None]] = {}

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[McpEndpoint]:
        """The session manager's life, in a task of its own (its task group must end in the
        task that began it, whoever closes the host): sessions end with it."""
        started, stop = asyncio.Event(), asyncio.Event()

        async def run() -> None:
            async with self._manager.run():
                started.set()
                reaper = asyncio.create_task(self._end_idle_sessions(), name="mcp idle sessions")
                try:
                    await stop.wait()
                finally:
                    reaper.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await reaper

        runner = asyncio.create_task(run(), name="mcp sessions")
        starting = asyncio.create_task(started.wait())
        await asyncio.wait({runner, starting}, return_when=asyncio.FIRST_COMPLETED)
        starting.cancel()
        if runner.done():
            runner.result()  # it failed to start: say why
        try:
            yield self
        finally:
            for task in list(self._requests.values()):
                task.cancel()
            stop.set()
            await runner

    # --- the relay ------------------------------------------------------------------

    async def serve(self, request: LinkMcpRequest, send: Send, host_id: str) -> None:
        """Serve one relayed request to this host (``host_id``) to its end, its answer sent
        piece by piece."""
        task = asyncio.current_task()
        assert task is not None
        self._requests[request.request_id] = task
        sent = _SentSoFar(send)
        try:
            await self._serve(request, sent, self._tabs_url(request, host_id))
        except asyncio.CancelledError:
            pass
        except Exception:
            # The hub waits for an answer: it gets a 500 (or the end of one begun).
            log.exception("an MCP request failed", extra={"team_id": request.caller.team_id})
            if not sent.ended:
                await _AnswerWriter(request.request_id, sent, started=sent.started).finish()
        finally:
            self._requests.pop(request.request_id, None)

    def session_count(self, token_id: str) -> int:
        """How many sessions opened with a token are open."""
        return sum(1 for s in self._sessions.values() if s.caller.token_id == token_id)

    def cancel(self, request_id: str) -> None:
        """The hub's client went away: stop answering it."""
        task = self._requests.get(request_id)
        if task is not None:
            task.cancel()

    async def end_tokens(self, token_ids: list[str]) -> None:
        """End every session opened with these tokens (revoked or expired), and the tool
        calls and approvals they wait for."""
        ended = set(token_ids)
        for session_id, session in list(self._sessions.items()):
            if session.caller.token_id in ended:
                self._sessions.pop(session_id, None)
                await self._terminate(session_id, session.caller)
        log.info("ended MCP sessions of ended tokens", extra={"tokens": len(ended)})

    async def _end_idle_sessions(self) -> None:
        while True:
            await asyncio.sleep(SESSION_IDLE_SECONDS / 30)
            try:
                await self.end_idle_sessions()
            except Exception:  # the next round tries again
                log.exception("ending idle MCP sessions failed")

    async def end_idle_sessions(self) -> None:
        """End the sessions no request has used for ``SESSION_IDLE_SECONDS`` (an open
        stream is a request in use); the endpoint does this every minute."""
        since = self._clock.now() - SESSION_IDLE_SECONDS
        for session_id, session in list(self._sessions.items()):
            if not session.in_flight and session.idle_since <= since:
                self._sessions.pop(session_id, None)
                await self._terminate(session_id, session.caller)

    async def _terminate(self, session_id: str, caller: McpCaller) -> None:
        """End a session as its client's DELETE would, through the session manager."""

        async def drop(_message: Any) -> None:
            return None

        scope = self._scope("DELETE", {SESSION_HEADER: session_id}, caller, "")
        await self._manager.handle_request(scope, _receiver(b"", asyncio.Event()), drop)

    def _tabs_url(self, request: LinkMcpRequest, host_id: str) -> str:
        """The web client's Tabs screen of this host, at the hub's public address (the one
        the outside agent reached, unless one is configured): what ``live_view_link``
        gives."""
        base = self._public_url or request.origin.rstrip("/")
        return f"{base}/app/teams/{request.caller.team_id}/hosts/{host_id}/tabs"

    async def _serve(self, request: LinkMcpRequest, send: Send, tabs_url: str) -> None:
        session_id = request.headers.get(SESSION_HEADER)
        session: _Session | None = None
        if session_id is not None:
            session = self._sessions.get(session_id)
            if session is None or session.caller.token_id != request.caller.token_id:
                # Another token's session is as unknown as an ended one.
                await self._answer_not_found(request, send)
                return
            session.in_flight += 1
        try:
            quick = _quick_call(request) if session_id is not None else None
            if quick is not None and session_id is not None:
                await self._answer_quick(request, send, tabs_url, session_id, quick)
            else:
                await self._serve_through_sdk(request, send, tabs_url, session_id)
        finally:
            if session is not None:
                session.in_flight -= 1
                session.idle_since = self._clock.now()

    async def _serve_through_sdk(
        self, request: LinkMcpRequest, send: Send, tabs_url: str, session_id: str | None
    ) -> None:
        gone = asyncio.Event()
        writer = _AnswerWriter(request.request_id, send)
        scope = self._scope(request.method, request.headers, request.caller, tabs_url)
        try:
            await self._manager.handle_request(
                scope, _receiver(request.body.encode("utf-8"), gone), writer.asgi_send
            )
        finally:
            gone.set()
            opened = writer.session_id
            if opened is not None and session_id is None and writer.status < 300:
                self._sessions[opened] = _Session(request.caller, self._clock.now())
            if session_id is not None and (request.method == "DELETE" or writer.status == 404):
                # Ended by its client, or by the session manager.
                self._sessions.pop(session_id, None)
            await writer.finish()

    async def _answer_quick(
        self,
        request: LinkMcpRequest,
        send: Send,
        tabs_url: str,
        session_id: str,
        quick: _QuickCall,
    ) -> None:
        """Run a quick call and send its JSON-RPC answer as one JSON object."""
        result = await self._tool_result(
            request.caller, session_id, str(quick.call_id), quick.name, quick.arguments, tabs_url
        )
        body = json.dumps(
            {"jsonrpc": "2.0", "id": quick.call_id, "result": result}, ensure_ascii=False
        )
        headers = {"content-type": "application/json", SESSION_HEADER: session_id}
        if len(body) <= MAX_MCP_PIECE:
            await send(
                LinkMcpResponse(
                    request_id=request.request_id, status=200, headers=headers, data=body
                )
            )
            return
        writer = _AnswerWriter(request.request_id, send)
        await writer.start(200, headers)
        await writer.write(body, last=True)

    async def _answer_not_found(self, request: LinkMcpRequest, send: Send) -> None:
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Session not found"},
            }
        )
        await send(
            LinkMcpResponseStart(
                request_id=request.request_id,
                status=404,
                headers={"content-type": "application/json"},
            )
        )
        await send(LinkMcpResponseBody(request_id=request.request_id, data=body, more=False))

    def _scope(
        self, method: str, headers: dict[str, str], caller: McpCaller, tabs_url: str
    ) -> dict[str, Any]:
        raw = [
            (name.lower().encode("latin-1"), value.encode("latin-1", "replace"))
            for name, value in headers.items()
        ]
        raw.append((b"host", b"crewhost-host"))
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": "/v1/mcp",
            "raw_path": b"/v1/mcp",
            "query_string": b"",
            "root_path": "",
            "headers": raw,
            "client": None,
            "server": None,
            "state": {_CALLER_KEY: caller, _TABS_URL_KEY: tabs_url},
        }

    # --- the tools ------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, _params: Any) -> types.ListToolsResult:
        caller: McpCaller = ctx.request.scope["state"][_CALLER_KEY]
        agents = [_ASK_AGENT_TOOL] if caller.scope == "browser+agents" else []
        return types.ListToolsResult(tools=[*_TOOL_LIST, *agents])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = ctx.request
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            return types.CallToolResult.model_validate(
                _result_payload(
                    _failure("mcpSessionNeeded", "initialize a session first"), error=True
                )
            )
        result = await self._tool_result(
            request.scope["state"][_CALLER_KEY],
            session_id,
            str(ctx.request_id),
            params.name,
            dict(params.arguments or {}),
            request.scope["state"][_TABS_URL_KEY],
            ctx=ctx,
        )
        return types.CallToolResult.model_validate(result)

    async def _tool_result(
        self,
        caller: McpCaller,
        session_id: str,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        tabs_url: str,
        *,
        ctx: Any = None,
    ) -> dict[str, Any]:
        """Run one call of a session's, its use told to the hub; the ``tools/call``
        result, as JSON. ``ctx`` (the SDK's) carries progress, for ``ask_agent``. A
        refusal on the way (arguments a gated call cannot be asked with, a spent budget)
        is the call's failed result, as the tool's own would be."""
        try:
            if name == LIVE_VIEW_LINK:
                result = await self._live_view_link(caller, tabs_url, session_id, arguments)
            elif name == ASK_AGENT and caller.scope == "browser+agents" and ctx is not None:
                result = await self._ask_agent(ctx, caller, arguments)
            elif name not in BROWSER_TOOLS:
                result = _failure("unknownTool", f"there is no tool named {name!r}")
            else:
                result = await self._run_browser_tool(caller, session_id, call_id, name, arguments)
        except CrewhostError as exc:
            result = {"error": exc.to_wire()}
        error = "error" in result
        outcome: Literal["ok", "error", "refused"] = "error" if error else "ok"
        if error and result["error"].get("code") == "callRefused":
            outcome = "refused"
        self._outbox.put(
            LinkMcpToolUsed(
                token_id=caller.token_id, team_id=caller.team_id, tool=name[:100], outcome=outcome
            )
        )
        return _result_payload(result, error=error)

    async def _run_browser_tool(
        self, caller: McpCaller, session_id: str, call_id: str, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        context = await self._tool_contexts.for_outside_session(
            caller.team_id, Caller.agent(session_id)
        )
        approval = None
        if CATALOG[name].gated:
            # The member approves the element the card names: the call acts on no other.
            approval = Approval()
            description = await describe_call(context, name, arguments, approval)
            member = caller.account_id
            approved = await self._attention.ask_consent(
                team_id=caller.team_id,
                thread_id=session_id,
                agent_id=session_id,
                call_id=call_id,
                tool=name,
                arguments=repair_arguments(name, arguments),
                summary=description or name,
                visible_to=lambda account_id: account_id == member,
                description=f"An outside agent (access token): {description or name}",
                addressed_to=[member],
            )
            if not approved:
                return {
                    "error": {
                        "code": "callRefused",
                        "message": "the member did not approve this call (denied, or no "
                        "answer in time); it was not made",
                    }
                }
        return await call_tool(context, name, arguments, approval)

    async def _ask_agent(
        self, ctx: Any, caller: McpCaller, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """Send a message to a team agent in a new private thread of the token's member;
        its text is sent as progress while it runs, and its answer is the result."""
        wanted, message = arguments.get("agent"), arguments.get("message")
        if not isinstance(wanted, str) or not isinstance(message, str) or not message.strip():
            return _failure("invalidArguments", "agent and message are both needed, as text")
        agents = await self._agents.list_agents(caller.team_id)
        found = [a for a in agents if a.id == wanted] or [
            a for a in agents if a.name.casefold() == wanted.strip().casefold()
        ]
        if len(found) != 1:
            return _failure("agentNotFound", f"no one agent is named {wanted!r} or has that id")
        turn = await self._threads.start_asked(
            caller.team_id,
            found[0].id,
            account_id=caller.account_id,
            text=message[:20_000],
            title=f"From an outside agent: {message.strip()[:60]}",
        )
        thread_id = turn.thread_id
        ended = asyncio.ensure_future(self._threads.ended_turn(caller.team_id, thread_id, turn.id))
        said = ""
        try:
            while not ended.done():
                await asyncio.wait({ended}, timeout=ANSWER_TICK)
                so_far = "\n\n".join(await self._threads.words(caller.team_id, thread_id))
                if len(so_far) > len(said) and so_far.startswith(said):
                    await ctx.session.report_progress(len(so_far), None, so_far[len(said) :])
                    said = so_far
        finally:
            ended.cancel()
        finished = ended.result()
        answer = "\n\n".join(await self._threads.words(caller.team_id, thread_id))
        status = finished.status if finished is not None else "error"
        result: dict[str, Any] = {"threadId": thread_id, "status": status, "answer": answer}
        if status != "done":
            reason = finished.reason if finished is not None else "the turn is gone"
            result["error"] = {"code": "agentTurnEnded", "message": f"{status}: {reason}"}
        return result

    async def _live_view_link(
        self, caller: McpCaller, tabs_url: str, session_id: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        tab_id = arguments.get("tabId")
        context = await self._tool_contexts.for_outside_session(
            caller.team_id, Caller.agent(session_id)
        )
        tabs = {t.id: t for t in context.engine.list_tabs(caller.team_id)}
        tab = tabs.get(tab_id) if isinstance(tab_id, str) else None
        if tab is None or not agent_reaches(context.caller, tab):
            return {
                "error": {"code": "tabNotFound", "message": "no such tab; list_tabs shows yours"}
            }
        return {
            "url": tabs_url,
            "tabId": tab.id,
            "note": "Open the address, signed in as a member of the team, and pick this tab "
            "in the list to watch it live.",
        }


def _tool_list() -> tuple[types.Tool, ...]:
    """What ``tools/list`` answers: fixed, so built once (a schema costs milliseconds)."""
    tools = [
        types.Tool(
            name=name,
            description=CATALOG[name].description,
            input_schema=CATALOG[name].input_schema(),
        )
        for name in BROWSER_TOOLS
    ]
    tools.append(
        types.Tool(
            name=LIVE_VIEW_LINK,
            description=(
                "The web client's address where a person of the team can watch (and take "
                "over) one of this session's tabs."
            ),
            input_schema=LIVE_VIEW_SCHEMA,
        )
    )
    return tuple(tools)


_TOOL_LIST = _tool_list()


def _failure(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


_ASK_AGENT_TOOL = types.Tool(
    name=ASK_AGENT,
    description=(
        "Send a message to one of the team's agents (by name or id) in a new thread of "
        "yours; its words stream as progress and its answer is the result. Its gated "
        "actions wait for your approval in the web client."
    ),
    input_schema=ASK_AGENT_SCHEMA,
)


def _result_payload(result: dict[str, Any], *, error: bool) -> dict[str, Any]:
    """A ``tools/call`` result in its wire form: the tool's answer as one text block."""
    text = json.dumps(result, ensure_ascii=False)
    return {"content": [{"type": "text", "text": text}], "isError": error}


def _quick_call(request: LinkMcpRequest) -> _QuickCall | None:
    """The request as a quick call, or None when the SDK should serve it: anything but one
    ``tools/call`` of a quick tool, well formed, that asks for no progress; a request the
    SDK would refuse (headers, protocol revision) goes to it too, for its answer."""
    headers = request.headers
    accept = {part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(",")}
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if (
        request.method != "POST"
        or content_type != "application/json"
        or not accept & {"application/json", "application/*", "*/*"}
        or not accept & {"text/event-stream", "text/*", "*/*"}
        or headers.get(PROTOCOL_HEADER, HANDSHAKE_PROTOCOL_VERSIONS[-1])
        not in HANDSHAKE_PROTOCOL_VERSIONS
        or '"tools/call"' not in request.body
    ):
        return None
    try:
        message = read_json(request.body)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json reads
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    call_id, params = message.get("id"), message.get("params")
    if (
        message.get("method") != "tools/call"
        or not isinstance(call_id, str | int)
        or isinstance(call_id, bool)
        or not isinstance(params, dict)
    ):
        return None
    name, arguments, meta = params.get("name"), params.get("arguments", {}), params.get("_meta")
    if (
        name not in QUICK_TOOLS
        or not isinstance(arguments, dict)
        or (meta is not None and (not isinstance(meta, dict) or "progressToken" in meta))
    ):
        return None
    return _QuickCall(call_id, name, arguments)


def _receiver(body: bytes, gone: asyncio.Event) -> Callable[[], Awaitable[dict[str, Any]]]:
    """An ASGI ``receive``: the body once, then a disconnect when the request is over."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    return receive


class _SentSoFar:
    """A ``send`` that remembers how far the answer went: begun, and ended."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.ended = False

    async def __call__(self, message: Any) -> None:
        if isinstance(message, LinkMcpResponse):
            self.started = self.ended = True
        elif isinstance(message, LinkMcpResponseStart):
            self.started = True
        elif isinstance(message, LinkMcpResponseBody) and not message.more:
            self.ended = True
        await self._send(message)


class _AnswerWriter:
    """An ASGI ``send`` that turns an answer into link messages; ``started``: its status
    and headers went already."""

    def __init__(self, request_id: str, send: Send, *, started: bool = False) -> None:
        self._request_id = request_id
        self._send = send
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.status = 0
        self.session_id: str | None = None
        self._started = started
        self._finished = False

    async def asgi_send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1")
                for k, v in message.get("headers", [])
            }
            await self.start(int(message["status"]), headers)
        elif message["type"] == "http.response.body" and not self._finished:
            text = self._decoder.decode(message.get("body", b""), final=False)
            await self.write(text, last=not message.get("more_body", False))

    async def start(self, status: int, headers: dict[str, str]) -> None:
        """The answer's status and headers (names in lower case)."""
        self.status = status
        self.session_id = headers.get(SESSION_HEADER)
        self._started = True
        await self._send(
            LinkMcpResponseStart(request_id=self._request_id, status=status, headers=headers)
        )

    async def write(self, text: str, *, last: bool) -> None:
        """Some of the body, in pieces the link carries; ``last`` ends the answer, in the
        same piece as the body's end."""
        if last:
            self._finished = True
            text += self._decoder.decode(b"", final=True)
        pieces = [text[at : at + MAX_MCP_PIECE] for at in range(0, len(text), MAX_MCP_PIECE)]
        for at, piece in enumerate(pieces or [""]):
            final = last and at == len(pieces or [""]) - 1
            if piece or final:
                await self._piece(piece, more=not final)

    async def _piece(self, data: str, *, more: bool) -> None:
        await self._send(LinkMcpResponseBody(request_id=self._request_id, data=data, more=more))

    async def finish(self) -> None:
        """The answer's end (once), even when the request ended without one."""
        if self._finished:
            return
        self._finished = True
        if not self._started:
            await self._send(
                LinkMcpResponseStart(request_id=self._request_id, status=500, headers={})
            )
        await self._piece(self._decoder.decode(b"", final=True), more=False)
