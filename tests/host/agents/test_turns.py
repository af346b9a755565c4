"""Agent turns end to end: a real host with real Chromium, fixture pages on loopback, the
team's providers pointed at local fakes of the real APIs, and members on real WebRTC peers
who send messages, follow the turn's events and answer its consent questions.

One hub, host and browser serve the whole module; each test makes its own agent, thread
and fixture page, so tests share nothing they look at.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import pytest_asyncio
from aiohttp import web

from peer.connection import HostConnection, TeamApiCallError
from server.host.agents.attention import arguments_hash
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.container import HostServices
from server.host.tools.repair import repair_arguments
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents, anthropic_error
from tests.support.fakes.openai import ChunkStream, FakeChatCompletions
from tests.support.fakes.server import RecordedRequest, StreamReply
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.loop_watch import watch_event_loop
from tests.support.peers import peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Distinct enough to be found anywhere it should not be.
ANTHROPIC_KEY = "sk-ant-e2e-" + secrets.token_hex(16)
OPENAI_KEY = "sk-openai-e2e-" + secrets.token_hex(16)
EVENT_SECONDS = 30.0


def panel_page(name: str) -> str:
    """A page whose one button tells the site it was clicked (``/effect/<name>``)."""
    return (
        f"<!doctype html><title>Panel {name}</title><h1>Panel {name}</h1>"
        f"<button id=more onclick=\"fetch('/effect/{name}');"
        f"document.getElementById('out').textContent='Details for {name}'\">"
        "Show details</button><p id=out></p>"
    )


async def panel(request: web.Request) -> web.Response:
    return web.Response(text=panel_page(request.match_info["name"]), content_type="text/html")


async def effect(_request: web.Request) -> web.Response:
    return web.Response(status=204)


@dataclass
class TurnsHost:
    """The module's host, its team and the two members on real peers."""

    server: RunningHub
    team_id: str
    admin: HostConnection
    member: HostConnection
    anthropic: FakeAnthropic
    openai: FakeChatCompletions
    site: Site
    database_file: Path

    @property
    def services(self) -> HostServices:
        return self.server.builtin.services

    def effects(self, name: str) -> int:
        """How many times the page ``name`` told the site its button was clicked."""
        return sum(1 for path, _ in self.site.requests if path == f"/effect/{name}")


@pytest_asyncio.fixture(autouse=True, loop_scope="module")
async def event_loop_watch() -> AsyncIterator[None]:
    """The suite's watchdog, on this module's loop (the tests run in it)."""
    async for _ in watch_event_loop():
        yield


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def host(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TurnsHost]:
    folder = tmp_path_factory.mktemp("turns")
    app = pages_app({}, routes={"/panel/{name}": panel, "/effect/{name}": effect})
    async with (
        scratch_database("sqlite", folder) as database,
        serving(app) as site,
        FakeAnthropic(api_key=ANTHROPIC_KEY) as anthropic,
        FakeChatCompletions(api_key=OPENAI_KEY) as openai,
        running_hub(hub_settings(folder, database), database, clock=FakeClock()) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        await server.invite(owner, team_id, "member@example.com", "member")
        host_id = await wait_linked(server)
        members = [
            await peer_member(server, email, folder)
            for email in ("owner@example.com", "member@example.com")
        ]
        admin, member = [await m.connect(host_id) for m in members]
        for provider, fake, key in (
            ("anthropic", anthropic, ANTHROPIC_KEY),
            ("openai", openai, OPENAI_KEY),
        ):
            # The address first: a provider moved to another origin forgets its key.
            await admin.call(
                "providers-v1/update", {"provider": provider, "baseUrl": fake.base_url}
            )
            await admin.call("providers-v1/set_key", {"provider": provider, "key": key})
        yield TurnsHost(
            server,
            team_id,
            admin,
            member,
            anthropic,
            openai,
            site,
            folder / "crewhost.db",
        )
        for connection in (admin, member):
            await connection.close()
        for m in members:
            await m.hub.close()


@pytest.fixture(autouse=True)
def fakes_played_out(host: TurnsHost) -> Iterator[None]:
    """Each test uses exactly the replies it scripted, and leaves none for the next."""
    yield
    left = host.anthropic.unplayed, host.openai.unplayed
    for fake in (host.anthropic, host.openai):
        fake.drop_unplayed()
    assert left == (0, 0), "scripted replies were left unplayed"


@dataclass
class Follow:
    """The events of one thread as one peer receives them, in order."""

    connection: HostConnection
    thread_id: str
    seen: list[dict[str, Any]] = field(default_factory=list)

    async def until(self, name: str) -> dict[str, Any]:
        """The data of the next ``name`` event of the thread; every event on the way is kept."""
        async with asyncio.timeout(EVENT_SECONDS):
            while True:
                event = await self.connection.events.get()
                if event["data"].get("threadId") != self.thread_id:
                    continue
                self.seen.append(event)
                if event["event"] == name:
                    return dict(event["data"])

    def names(self) -> list[str]:
        """The events seen, consecutive text deltas as one."""
        names: list[str] = []
        for event in self.seen:
            if not (event["event"] == "turn-text" and names and names[-1] == "turn-text"):
                names.append(event["event"])
        return names

    def text(self) -> str:
        return "".join(e["data"]["text"] for e in self.seen if e["event"] == "turn-text")

    def tools(self) -> list[tuple[str, str, str]]:
        """(event, tool, outcome or summary) of each tool call event."""
        return [
            (e["event"], e["data"]["tool"], e["data"].get("outcome", ""))
            for e in self.seen
            if e["event"].startswith("tool-call-")
        ]


async def make_agent(host: TurnsHost, **fields: Any) -> str:
    made = await host.admin.call("agents-v1/create", {"name": "Scout", **fields})
    return str(made["id"])


async def start_thread(
    host: TurnsHost, agent_id: str, connection: HostConnection | None = None
) -> Follow:
    """A thread of ``connection`` (the member by default) with the agent, followed by it."""
    connection = connection or host.member
    thread = await connection.call("threads-v1/start", {"agentId": agent_id, "title": "Work"})
    return Follow(connection, str(thread["id"]))


async def open_panel(host: TurnsHost, name: str, agent_id: str, thread_id: str) -> str:
    """A tab of the agent's thread on the fixture page ``name``; its id."""
    engine = await host.services.browser.engine()
    tab = await engine.open_tab(
        host.team_id,
        Partition.shared(),
        url=host.site.url(f"/panel/{name}"),
        owner_agent_id=agent_id,
        owner_thread_id=thread_id,
    )
    return tab.id


async def send(follow: Follow, text: str) -> str:
    sent = await follow.connection.call(
        "threads-v1/send", {"threadId": follow.thread_id, "text": text}
    )
    return str(sent["turnId"])


async def answer(follow: Follow, request_id: str, *, approve: bool) -> None:
    """Answer a consent request as the web client does: bound to the call it was shown."""
    listed = await follow.connection.call("attention-v1/list")
    shown = [r for r in listed["requests"] if r["id"] == request_id]
    assert len(shown) == 1, listed
    await follow.connection.call(
        "attention-v1/answer",
        {"id": request_id, "approve": approve, "argumentsHash": shown[0]["argumentsHash"]},
    )


async def refused(connection: HostConnection, route: str, args: dict[str, Any]) -> str:
    with pytest.raises(TeamApiCallError) as caught:
        await connection.call(route, args)
    return str(caught.value.code)


def last_tool_result(request: RecordedRequest) -> dict[str, Any]:
    """The last tool result an Anthropic request carries, as the tool returned it."""
    blocks = request.messages()[-1]["content"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    return dict(json.loads(results[-1]["content"]))


def ref_of(snapshot: dict[str, Any], line_part: str) -> str:
    """The ref of the one snapshot line that contains ``line_part``."""
    tree = str(snapshot["tree"])
    lines = [line.strip() for line in tree.splitlines() if line_part in line]
    assert len(lines) == 1, tree
    return lines[0].split(" ", 1)[0]


def click_what_the_snapshot_showed(
    call_id: str, written: dict[str, Any] | None = None
) -> Callable[[RecordedRequest], bytes]:
    """A reply that clicks the "Show details" button of the snapshot the request carries.

    With ``written``, the call names the ref the short way agents often write (a top-level
    ``ref``) and ``written`` keeps the arguments as the model wrote them.
    """

    def body(request: RecordedRequest) -> bytes:
        snapshot = last_tool_result(request)
        ref = ref_of(snapshot, '"Show details"')
        arguments: dict[str, Any] = {"tabId": snapshot["tabId"]}
        if written is None:
            arguments["target"] = {"kind": "ref", "ref": ref}
        else:
            arguments["ref"] = ref
            written.update(arguments)
        return MessageEvents().tool_use(call_id, "click", arguments).stop("tool_use").body()

    return body


def snapshot_then_click(
    tab_id: str, closing: str, written: dict[str, Any] | None = None
) -> list[StreamReply]:
    """The model's replies: look at the tab, click what it showed, then say ``closing``."""
    return [
        MessageEvents()
        .text("Let me look ", "at the page.")
        .tool_use("toolu_snap", "snapshot", {"tabId": tab_id})
        .stop("tool_use")
        .reply(),
        StreamReply(click_what_the_snapshot_showed("toolu_click", written)),
        MessageEvents().text(closing).stop().reply(),
    ]


# -- consent ------------------------------------------------------------------------------


async def test_a_member_approves_a_click_over_webrtc_and_the_page_sees_it(
    host: TurnsHost,
) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "approve", agent_id, follow.thread_id)
    written: dict[str, Any] = {}
    host.anthropic.script(*snapshot_then_click(tab_id, "The details are shown.", written))

    turn_id = await send(follow, "Show me the details")
    asked = await follow.until("attention-requested")
    assert (asked["tool"], asked["agentId"], asked["kind"]) == ("click", agent_id, "consent")
    # The person reads what will happen: the button by its name on the page, and the page.
    described = f"Click “Show details” on Panel approve ({host.site.url('/').split('/')[2]})"
    assert asked["description"] == described
    # The person approves the call as it will run, with the agent's short form repaired.
    listed = await follow.connection.call("attention-v1/list")
    shown = next(r for r in listed["requests"] if r["id"] == asked["id"])
    assert shown["description"] == described
    as_run = repair_arguments("click", written)
    assert as_run != written
    assert shown["argumentsHash"] == arguments_hash(as_run)
    assert host.effects("approve") == 0  # nothing is clicked before the answer
    # Read while it waits, the thread has the turn's replies and results so far, and no
    # text twice.
    waiting = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [m["role"] for m in waiting["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert waiting["messages"][1]["text"] == "Let me look at the page."
    assert [c["name"] for c in waiting["messages"][3]["toolCalls"]] == ["click"]
    assert (waiting["runningTurnId"], waiting["runningText"]) == (turn_id, "")
    await answer(follow, asked["id"], approve=True)
    finished = await follow.until("turn-finished")

    assert (finished["turnId"], finished["status"], finished["toolCalls"]) == (turn_id, "done", 2)
    assert finished["reason"] is None
    assert finished["inputTokens"] > 0
    # The member who may answer is told in their notifications too.
    assert follow.names().count("notification-created") == 1
    assert [n for n in follow.names() if n != "notification-created"] == [
        "threads-changed",
        "turn-started",
        "turn-text",
        "tool-call-started",
        "tool-call-finished",
        "attention-requested",
        "attention-resolved",
        "tool-call-started",
        "tool-call-finished",
        "turn-text",
        "turn-finished",
    ]
    assert follow.text() == "Let me look at the page.The details are shown."
    assert follow.tools() == [
        ("tool-call-started", "snapshot", ""),
        ("tool-call-finished", "snapshot", "ok"),
        ("tool-call-started", "click", ""),
        ("tool-call-finished", "click", "ok"),
    ]
    resolved = next(e["data"] for e in follow.seen if e["event"] == "attention-resolved")
    assert (resolved["id"], resolved["outcome"]) == (asked["id"], "answered")
    # The click's card says the same; the snapshot, a free tool, needs no description.
    cards = [e["data"] for e in follow.seen if e["event"].startswith("tool-call-")]
    assert [c["description"] for c in cards] == [None, None, described, described]
    assert cards[-1]["tabId"] == tab_id
    await eventually(lambda: host.effects("approve") == 1)

    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [m["role"] for m in contents["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [t["status"] for t in contents["turns"]] == ["done"]
    assert contents["runningTurnId"] is None
    # Read back, the click's result keeps its description for the card.
    results = [m for m in contents["messages"] if m["role"] == "tool"]
    assert [r["description"] for r in results] == [None, described]


async def test_a_title_cannot_turn_the_cards_words_around(host: TurnsHost) -> None:
    """A page titled with a right-to-left override would read, on the card, as if the
    site in brackets were another; the card shows the title without it."""
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    flipped = "\u202e(moc.knab) yaP"
    tab_id = await open_panel(host, quote(flipped), agent_id, follow.thread_id)
    host.anthropic.script(*snapshot_then_click(tab_id, "Shown.")[:2])  # denied: no closing

    await send(follow, "Show me the details")
    asked = await follow.until("attention-requested")
    site = host.site.url("/").split("/")[2]
    assert asked["description"] == f"Click “Show details” on Panel (moc.knab) yaP ({site})"
    listed = await follow.connection.call("attention-v1/list")
    [shown] = [r for r in listed["requests"] if r["id"] == asked["id"]]
    assert "\u202e" not in shown["description"] + shown["summary"]
    await answer(follow, asked["id"], approve=False)
    await follow.until("turn-finished")
    cards = [e["data"] for e in follow.seen if e["event"].startswith("tool-call-")]
    assert all("\u202e" not in (c.get("tabTitle") or "") for c in cards)


async def test_an_approved_click_refuses_when_the_page_renamed_its_button(
    host: TurnsHost,
) -> None:
    """The person approved the button the card named; renamed before the answer, it is no
    longer what they approved, so the approved call acts on nothing."""
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "renamed", agent_id, follow.thread_id)
    host.anthropic.script(*snapshot_then_click(tab_id, "The page changed."))

    await send(follow, "Show me the details")
    asked = await follow.until("attention-requested")
    assert asked["description"].startswith("Click “Show details”")
    engine = await host.services.browser.engine()
    rename = "document.getElementById('more').textContent = 'Delete everything'"
    caller = Caller.agent(agent_id, follow.thread_id)
    await engine.run(host.team_id, tab_id, caller, lambda page: page.evaluate(rename))
    await answer(follow, asked["id"], approve=True)
    finished = await follow.until("turn-finished")

    assert finished["status"] == "done"
    assert follow.tools()[-1] == ("tool-call-finished", "click", "refused")
    assert last_tool_result(host.anthropic.requests[-1])["error"]["code"] == "targetChanged"
    assert host.effects("renamed") == 0


async def test_a_denial_ends_the_turn_and_nothing_is_clicked(host: TurnsHost) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "deny", agent_id, follow.thread_id)
    # The model is not asked again after a denial: the closing reply is never played.
    host.anthropic.script(*snapshot_then_click(tab_id, "unused")[:2])

    await send(follow, "Show me the details")
    asked = await follow.until("attention-requested")
    await answer(follow, asked["id"], approve=False)
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["reason"]) == ("denied", "a member denied click")
    assert finished["toolCalls"] == 1  # the snapshot; the click never ran
    assert follow.tools() == [
        ("tool-call-started", "snapshot", ""),
        ("tool-call-finished", "snapshot", "ok"),
        ("tool-call-finished", "click", "refused"),
    ]
    assert host.effects("deny") == 0
    # The question went with its turn: a late approval is told it was answered (the
    # stored request says how it ended), and approves nothing.
    late = {"id": asked["id"], "approve": True}
    assert await refused(host.member, "attention-v1/answer", late) == "attentionAnswered"
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    denied = contents["messages"][-1]
    assert (denied["role"], denied["isError"]) == ("tool", True)


# -- how a turn ends ----------------------------------------------------------------------


def snapshot_reply(call_id: str, tab_id: str) -> StreamReply:
    return MessageEvents().tool_use(call_id, "snapshot", {"tabId": tab_id}).stop("tool_use").reply()


async def test_the_tool_call_cap_ends_the_turn_capped(host: TurnsHost) -> None:
    agent_id = await make_agent(host, maxToolCalls=2)
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "cap", agent_id, follow.thread_id)
    # Two calls run; the third is over the cap, and the model is not asked again.
    host.anthropic.script(*(snapshot_reply(f"toolu_{n}", tab_id) for n in range(3)))

    turn_id = await send(follow, "Keep looking")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["toolCalls"]) == ("capped", 2)
    assert finished["reason"] == "the turn reached its cap of 2 tool calls"
    assert [t for t in follow.tools() if t[0] == "tool-call-started"] == [
        ("tool-call-started", "snapshot", "")
    ] * 2
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    unanswered = contents["messages"][-1]
    assert (unanswered["role"], unanswered["callId"]) == ("tool", f"{turn_id}.3")
    assert unanswered["content"].startswith("not run")


async def test_a_member_stops_a_streaming_turn(host: TurnsHost) -> None:
    # Its own gateway (a custom, OpenAI-compatible provider) whose stream stalls mid-reply;
    # leaving the block lets the stalled answer end.
    async with FakeChatCompletions(api_key="sk-gateway-stall-0123456789") as gateway:
        custom = await host.admin.call(
            "providers-v1/create_custom",
            {
                "name": "Stalling gateway",
                "baseUrl": gateway.base_url,
                "models": ["gpt-fake"],
                "key": "sk-gateway-stall-0123456789",
            },
        )
        agent_id = await make_agent(host, provider=custom["id"])
        follow = await start_thread(host, agent_id)
        first = ChunkStream().role().text("Reading the first ")
        rest = ChunkStream().text("page, then the next.").finish().done()
        # The adapter asks for usage, which puts a usage field in every chunk.
        asked = RecordedRequest("/", {}, {"stream_options": {"include_usage": True}})
        gateway.script(
            StreamReply(
                first.body(asked) + rest.body(asked),
                chunk_size=len(first.body(asked)),
                stall_after=1,
            )
        )

        turn_id = await send(follow, "Read everything")
        said = await follow.until("turn-text")
        assert said["text"] == "Reading the first "
        running = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
        assert (running["runningTurnId"], running["runningText"]) == (
            turn_id,
            "Reading the first ",
        )
        assert await host.member.call("threads-v1/stop", {"threadId": follow.thread_id}) == {
            "stopped": True
        }
        finished = await follow.until("turn-finished")

    assert (finished["status"], finished["reason"]) == ("stopped", "a member stopped the turn")
    assert await host.member.call("threads-v1/stop", {"threadId": follow.thread_id}) == {
        "stopped": False
    }
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [t["status"] for t in contents["turns"]] == ["stopped"]
    assert contents["runningTurnId"] is None


async def test_a_stop_that_comes_as_the_turn_stores_its_end_keeps_the_reply(
    host: TurnsHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = host.services.threads
    storing, go_on = asyncio.Event(), asyncio.Event()
    note_provider = threads._record_provider_error

    async def held(team_id: str, provider_id: str, error: str | None) -> None:
        storing.set()  # the model has answered: the turn is storing its end
        await go_on.wait()
        await note_provider(team_id, provider_id, error)

    monkeypatch.setattr(threads, "_record_provider_error", held)
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    host.anthropic.script(MessageEvents().text("All done here.").stop().reply())
    turn_id = await send(follow, "Finish up")
    async with asyncio.timeout(EVENT_SECONDS):
        await storing.wait()
    stop = {"threadId": follow.thread_id}
    assert await host.member.call("threads-v1/stop", stop) == {"stopped": False}
    go_on.set()

    finished = await follow.until("turn-finished")
    assert (finished["turnId"], finished["status"]) == (turn_id, "done")
    contents = await host.member.call("threads-v1/get", stop)
    assert [t["status"] for t in contents["turns"]] == ["done"]
    assert [m["role"] for m in contents["messages"]] == ["user", "assistant"]
    assert contents["runningTurnId"] is None


async def test_half_a_utf16_pair_from_the_model_is_read_as_a_replacement_character(
    host: TurnsHost,
) -> None:
    """JSON may escape half of a UTF-16 pair alone; a reply or a call's arguments holding
    one could be neither sent nor stored, and left its turn running for good."""
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    host.anthropic.script(
        MessageEvents()
        .tool_use("toolu_size", "ask_user", {"question": "Which size \ud83d?"})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Size M \udc00 it is.").stop().reply(),
    )
    await send(follow, "Order a shirt")
    asked = await follow.until("attention-requested")
    assert asked["question"] == "Which size \ufffd?"
    await host.member.call("attention-v1/reply", {"id": asked["id"], "answer": "M"})
    finished = await follow.until("turn-finished")
    assert finished["status"] == "done"
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert contents["messages"][-1]["text"] == "Size M \ufffd it is."
    assert [t["status"] for t in contents["turns"]] == ["done"]


async def test_a_provider_error_ends_the_turn_with_a_readable_reason(host: TurnsHost) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    host.anthropic.script(anthropic_error(500, "api_error", "Internal server error"))

    await send(follow, "Hello")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["reason"]) == (
        "error",
        "Anthropic failed (500): Internal server error",
    )
    assert follow.names() == ["threads-changed", "turn-started", "turn-finished"]
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [m["role"] for m in contents["messages"]] == ["user"]
    assert contents["turns"][0]["reason"] == finished["reason"]
    # Nothing a person can do about it in the client: no code.
    assert finished["code"] is None


async def test_a_missing_key_ends_the_turn_with_its_code(host: TurnsHost) -> None:
    # The module's host sets no key for OpenRouter.
    agent_id = await make_agent(host, provider="openrouter")
    follow = await start_thread(host, agent_id)

    await send(follow, "Hello")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["code"]) == ("error", "providerKeyMissing")
    assert finished["reason"] == "no API key is set for OpenRouter"
    # A reloaded chat reads the same code.
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert contents["turns"][0]["code"] == "providerKeyMissing"


async def test_a_refused_key_ends_the_turn_with_a_readable_reason(host: TurnsHost) -> None:
    # A gateway at the fake OpenAI's address whose key the fake refuses (401).
    custom = await host.admin.call(
        "providers-v1/create_custom",
        {
            "name": "Wrong key gateway",
            "baseUrl": host.openai.base_url,
            "models": ["gpt-fake"],
            "key": "sk-not-the-right-key-42",
        },
    )
    agent_id = await make_agent(host, provider=custom["id"])
    follow = await start_thread(host, agent_id)

    await send(follow, "Hello")
    finished = await follow.until("turn-finished")

    assert finished["status"] == "error"
    # Named as the team named it, with the provider's own words (the key masked out).
    assert finished["reason"].startswith("Wrong key gateway refused the API key (401): ")
    assert "Incorrect API key provided" in finished["reason"]
    assert finished["code"] == "providerKeyRefused"
    assert "sk-not-the-right-key-42" not in json.dumps(follow.seen)
    # The provider's status keeps the failure until it answers again.
    listed = await host.admin.call("providers-v1/list", {})
    status = next(p for p in listed["providers"] if p["id"] == custom["id"])
    assert (status["lastError"], status["verified"]) == (finished["reason"], False)

    # With the right key the next turn answers, and the failure is forgotten.
    await host.admin.call("providers-v1/set_key", {"provider": custom["id"], "key": OPENAI_KEY})
    host.openai.script(openai_text("Hello again."))
    await send(follow, "Hello again")
    again = await follow.until("turn-finished")
    assert again["status"] == "done", again
    listed = await host.admin.call("providers-v1/list", {})
    status = next(p for p in listed["providers"] if p["id"] == custom["id"])
    assert (status["lastError"], status["verified"]) == (None, True)


async def test_a_rate_limit_is_waited_out_and_the_turn_goes_on(host: TurnsHost) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    host.anthropic.script(
        anthropic_error(
            429, "rate_limit_error", "Number of requests exceeded", {"retry-after": "1"}
        ),
        MessageEvents().text("Here I am.").stop().reply(),
    )
    before = len(host.anthropic.requests)

    await send(follow, "Hello")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["reason"]) == ("done", None)
    assert follow.text() == "Here I am."
    assert len(host.anthropic.requests) - before == 2


def breaks_off_after(text: str) -> StreamReply:
    """A reply that says ``text`` and then loses its connection (the host asks again)."""
    said = MessageEvents().text(text).body()
    return StreamReply(said + said, chunk_size=len(said), drop_after=1)


def text_events(follow: Follow) -> list[tuple[str, str]]:
    """(event, text or reason) of the turn's text events, as the members received them."""
    return [
        (e["event"], e["data"].get("text") or e["data"].get("reason"))
        for e in follow.seen
        if e["event"] in ("turn-text", "turn-text-reset")
    ]


async def test_a_reply_that_broke_off_is_asked_again_and_its_text_dropped(
    host: TurnsHost,
) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    host.anthropic.script(
        breaks_off_after("Partial"), MessageEvents().text("Whole answer.").stop().reply()
    )

    await send(follow, "Hello")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["reason"]) == ("done", None)
    # Who watched saw the broken-off text, then was told to drop it, then the new reply.
    assert text_events(follow) == [
        ("turn-text", "Partial"),
        ("turn-text-reset", "the connection to Anthropic broke in the middle of the reply"),
        ("turn-text", "Whole answer."),
    ]
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [(m["role"], m["text"]) for m in contents["messages"]] == [
        ("user", "Hello"),
        ("assistant", "Whole answer."),
    ]


async def test_who_reads_a_retried_turn_midway_reads_the_new_reply_only(host: TurnsHost) -> None:
    # Its own gateway, so the second reply can stall until the test leaves the block.
    key = "sk-gateway-retry-0123456789"
    async with FakeChatCompletions(api_key=key) as gateway:
        custom = await host.admin.call(
            "providers-v1/create_custom",
            {
                "name": "Retry gateway",
                "baseUrl": gateway.base_url,
                "models": ["gpt-fake"],
                "key": key,
            },
        )
        agent_id = await make_agent(host, provider=custom["id"])
        follow = await start_thread(host, agent_id)
        # The adapter asks for usage, which puts a usage field in every chunk.
        asked = RecordedRequest("/", {}, {"stream_options": {"include_usage": True}})
        broken = ChunkStream().role().text("Partial").body(asked)
        again = ChunkStream().role().text("Whole ").body(asked)
        gateway.script(
            StreamReply(broken + broken, chunk_size=len(broken), drop_after=1),
            StreamReply(again + again, chunk_size=len(again), stall_after=1),
        )

        await send(follow, "Hello")
        reset = await follow.until("turn-text-reset")
        assert (await follow.until("turn-text"))["text"] == "Whole "
        running = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
        assert running["runningText"] == "Whole "
        await host.member.call("threads-v1/stop", {"threadId": follow.thread_id})
        assert (await follow.until("turn-finished"))["status"] == "stopped"

    assert reset["reason"] == "the connection to Retry gateway broke in the middle of the reply"


async def test_a_reply_cut_inside_a_call_by_the_token_limit_ends_incomplete(
    host: TurnsHost,
) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "cut", agent_id, follow.thread_id)
    click = {"tabId": tab_id, "target": {"kind": "text", "text": "Show details"}}
    host.anthropic.script(
        MessageEvents()
        .text("I will press it.")
        .tool_use("toolu_cut", "click", click, keep=25)
        .stop("max_tokens")
        .reply()
    )

    await send(follow, "Show the details")
    finished = await follow.until("turn-finished")

    assert finished["status"] == "incomplete"
    assert finished["reason"] == (
        "the model's reply was cut at its token limit (4096 tokens) in the middle of its"
        " call of click; none of that reply's calls ran"
    )
    assert follow.tools() == []
    assert host.effects("cut") == 0
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    said = contents["messages"][-1]
    assert (said["role"], said["text"], said["toolCalls"]) == (
        "assistant",
        "I will press it.",
        [],
    )
    assert [t["status"] for t in contents["turns"]] == ["incomplete"]

    # The thread goes on: the fake checks the transcript as the real API does.
    host.anthropic.script(MessageEvents().text("Shall I try again?").stop().reply())
    await send(follow, "Go on")
    assert (await follow.until("turn-finished"))["status"] == "done"


async def test_an_openai_reply_cut_by_length_inside_its_calls_ends_incomplete(
    host: TurnsHost,
) -> None:
    agent_id = await make_agent(host, provider="openai")
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "length", agent_id, follow.thread_id)
    click = json.dumps({"tabId": tab_id, "target": {"kind": "text", "text": "Show details"}})
    host.openai.script(
        ChunkStream()
        .role()
        .text("Looking, then pressing.")
        .tool_call("call_look", "snapshot", {"tabId": tab_id}, index=0)
        .tool_call("call_cut", "click", click[:30], index=1)
        .finish("length")
        .usage(40, 4096)
        .done()
        .reply()
    )

    await send(follow, "Show the details")
    finished = await follow.until("turn-finished")

    assert finished["status"] == "incomplete"
    assert finished["reason"] == (
        "the model's reply was cut at its token limit (4096 tokens) in the middle of its"
        " call of click; none of that reply's calls ran"
    )
    assert follow.tools() == []
    assert host.effects("length") == 0
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [m["role"] for m in contents["messages"]] == ["user", "assistant", "tool"]
    assert contents["messages"][-1]["content"].startswith("not run")

    host.openai.script(openai_text("Shall I try again?"))
    await send(follow, "Go on")
    assert (await follow.until("turn-finished"))["status"] == "done"


async def test_a_text_reply_cut_by_the_token_limit_ends_incomplete(host: TurnsHost) -> None:
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    host.anthropic.script(MessageEvents().text("The first of many").stop("max_tokens").reply())

    await send(follow, "Tell me everything")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["reason"]) == (
        "incomplete",
        "the model's reply was cut at its token limit (4096 tokens)",
    )
    assert follow.text() == "The first of many"


# -- providers and permissions ------------------------------------------------------------


def openai_text(text: str) -> StreamReply:
    return ChunkStream().role().text(text).finish().usage(12, 3).done().reply()


async def test_a_thread_goes_on_with_another_provider(host: TurnsHost) -> None:
    """A turn stopped while its click waited for consent, continued on OpenAI's wire and then
    on Anthropic's again: each fake checks the transcript as its real API does."""
    agent_id = await make_agent(host)
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "switch", agent_id, follow.thread_id)
    host.anthropic.script(*snapshot_then_click(tab_id, "unused")[:2])
    await send(follow, "Show me the details")
    await follow.until("attention-requested")
    await host.member.call("threads-v1/stop", {"threadId": follow.thread_id})
    assert (await follow.until("turn-finished"))["status"] == "stopped"
    assert host.effects("switch") == 0
    # Nobody denied the click: the question was cancelled and the call did not run.
    resolved = next(e["data"] for e in follow.seen if e["event"] == "attention-resolved")
    assert resolved["outcome"] == "cancelled"
    assert ("tool-call-finished", "click", "refused") not in follow.tools()

    await host.admin.call("agents-v1/update", {"id": agent_id, "provider": "openai"})
    host.openai.script(
        ChunkStream()
        .role()
        .tool_call("call_snap", "snapshot", {"tabId": tab_id})
        .finish("tool_calls")
        .usage(30, 5)
        .done()
        .reply(),
        openai_text("The page still shows its button."),
    )
    await send(follow, "What does it show now?")
    assert (await follow.until("turn-finished"))["status"] == "done"
    sent = host.openai.requests[-1].messages()
    assert [m["role"] for m in sent] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
    ]
    # OpenAI's wire has no error flag: the adapter marks the result in its text.
    assert sent[5]["content"] == "Error: not run: a member stopped the turn"

    await host.admin.call("agents-v1/update", {"id": agent_id, "provider": "anthropic"})
    host.anthropic.script(MessageEvents().text("Back on Anthropic.").stop().reply())
    await send(follow, "Thanks")
    assert (await follow.until("turn-finished"))["status"] == "done"
    assert len(host.anthropic.requests[-1].messages()) == 9  # user, call, result, ... user
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    assert [t["status"] for t in contents["turns"]] == ["stopped", "done", "done"]


async def test_auto_approved_families_run_without_asking(host: TurnsHost) -> None:
    agent_id = await make_agent(
        host,
        permissions={"browser-navigation": "auto-approve", "browser-input": "auto-approve"},
    )
    follow = await start_thread(host, agent_id)
    host.anthropic.script(
        # The agent opens the page itself: ``open`` answers with the tab and its snapshot.
        MessageEvents()
        .tool_use("toolu_open", "open", {"url": host.site.url("/panel/auto")})
        .stop("tool_use")
        .reply(),
        StreamReply(click_what_the_snapshot_showed("toolu_click")),
        MessageEvents().text("Done without asking.").stop().reply(),
    )

    await send(follow, "Open the panel and show the details")
    finished = await follow.until("turn-finished")

    assert (finished["status"], finished["toolCalls"]) == ("done", 2)
    assert not [e for e in follow.seen if e["event"].startswith("attention-")]
    assert [t[1:] for t in follow.tools() if t[0] == "tool-call-finished"] == [
        ("open", "ok"),
        ("click", "ok"),
    ]
    await eventually(lambda: host.effects("auto") == 1)
    assert (await host.member.call("attention-v1/list"))["requests"] == []


# -- keys ---------------------------------------------------------------------------------


async def drained(connection: HostConnection) -> list[dict[str, Any]]:
    """Every event the peer has received and not read yet.

    A call answers after every event the host sent before it: the channel is ordered.
    """
    await connection.call("host-v1/whoami")
    events = []
    while not connection.events.empty():
        events.append(connection.events.get_nowait())
    return events


def files_holding(folder: Path, secret: bytes) -> list[str]:
    """The files under ``folder`` (the host's data: database, browser profiles) with ``secret``."""
    found = []
    for path in folder.rglob("*"):
        try:
            if path.is_file() and secret in path.read_bytes():
                found.append(str(path))
        except OSError:
            continue  # a browser's lock or socket
    return found


def rows_holding(database_file: Path, secret: str) -> list[str]:
    with sqlite3.connect(database_file) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        assert {"providers", "threads", "thread_messages", "turns"} <= set(tables)
        return [
            table
            for table in tables
            if any(secret in repr(row) for row in conn.execute(f'SELECT * FROM "{table}"'))  # noqa: S608
        ]


async def test_the_provider_keys_appear_nowhere(
    host: TurnsHost, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    anthropic_agent = await make_agent(host)
    openai_agent = await make_agent(host, provider="openai")
    on_anthropic = await start_thread(host, anthropic_agent)
    on_openai = await start_thread(host, openai_agent)
    tab_id = await open_panel(host, "keys", anthropic_agent, on_anthropic.thread_id)
    host.anthropic.script(
        snapshot_reply("toolu_look", tab_id),
        MessageEvents().text("Looked.").stop().reply(),
        # A provider that quotes the key back in its error.
        anthropic_error(400, "invalid_request_error", f"key {ANTHROPIC_KEY} may not do this"),
    )
    host.openai.script(openai_text("Hello from OpenAI."))

    await send(on_anthropic, "Look at the page")
    assert (await on_anthropic.until("turn-finished"))["status"] == "done"
    await send(on_openai, "Say hello")
    assert (await on_openai.until("turn-finished"))["status"] == "done"
    await send(on_anthropic, "Again")
    failed = await on_anthropic.until("turn-finished")
    assert failed["status"] == "error"
    assert "[redacted]" in failed["reason"]
    # The fakes did receive each key: it is where it belongs, and nowhere else.
    assert host.anthropic.requests[-1].headers["x-api-key"] == ANTHROPIC_KEY
    assert host.openai.requests[-1].headers["authorization"] == f"Bearer {OPENAI_KEY}"

    answers = [
        await connection.call(route, args)
        for connection, route, args in (
            (host.admin, "providers-v1/list", {}),
            (host.admin, "agents-v1/list", {}),
            (host.member, "providers-v1/list", {}),
            (host.member, "agents-v1/list", {}),
            (host.member, "attention-v1/list", {}),
            (host.member, "threads-v1/list", {"agentId": anthropic_agent}),
            (host.member, "threads-v1/get", {"threadId": on_anthropic.thread_id}),
            (host.member, "threads-v1/get", {"threadId": on_openai.thread_id}),
        )
    ]
    events = [*on_anthropic.seen, *on_openai.seen]
    events += await drained(host.admin) + await drained(host.member)
    logged = [
        f"{record.getMessage()} {record.__dict__!r} {record.exc_text or ''}"
        for record in caplog.records
    ]
    database_rows = await asyncio.to_thread(rows_holding, host.database_file, ANTHROPIC_KEY)
    database_rows += await asyncio.to_thread(rows_holding, host.database_file, OPENAI_KEY)
    data_dir = host.database_file.parent
    for key in (ANTHROPIC_KEY, OPENAI_KEY):
        assert key not in json.dumps(answers)
        assert key not in json.dumps(events)
        assert not [line for line in logged if key in line]
        assert await asyncio.to_thread(files_holding, data_dir, key.encode()) == []
    assert database_rows == []
    # The same searches find what is stored in the clear: they look in the right places.
    said = "Hello from OpenAI."
    assert await asyncio.to_thread(rows_holding, host.database_file, said) == ["thread_messages"]
    assert await asyncio.to_thread(files_holding, data_dir, said.encode())
    assert said in json.dumps(answers)
    assert said in json.dumps(events)
    assert logged


# -- the host's own call ids ----------------------------------------------------------------


def openai_call(call_id: str, name: str, arguments: dict[str, Any]) -> StreamReply:
    return (
        ChunkStream()
        .role()
        .tool_call(call_id, name, arguments)
        .finish("tool_calls")
        .usage(30, 5)
        .done()
        .reply()
    )


async def test_a_provider_that_repeats_its_call_ids_gets_one_card_per_call(
    host: TurnsHost,
) -> None:
    """A gateway that names every call ``call_0``, within a turn and in later turns: each
    call keeps its own card, consent and result, live and after a reload; the provider
    reads its own ids back."""
    agent_id = await make_agent(host, provider="openai")
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "repeat", agent_id, follow.thread_id)
    button = {"kind": "role", "role": "button", "name": "Show details"}
    host.openai.script(
        openai_call("call_0", "snapshot", {"tabId": tab_id}),
        openai_call("call_0", "click", {"tabId": tab_id, "target": button}),
        openai_text("Clicked."),
        openai_call("call_0", "open", {"url": host.site.url("/panel/opened")}),
        openai_text("Opened."),
        openai_call("call_0", "click", {"tabId": tab_id, "target": button}),
    )

    first = await send(follow, "Show the details")
    click_asked = await follow.until("attention-requested")
    await answer(follow, click_asked["id"], approve=True)
    assert (await follow.until("turn-finished"))["status"] == "done"
    second = await send(follow, "Open another panel")
    open_asked = await follow.until("attention-requested")
    await answer(follow, open_asked["id"], approve=True)
    assert (await follow.until("turn-finished"))["status"] == "done"
    third = await send(follow, "Click again")
    denied_asked = await follow.until("attention-requested")
    await answer(follow, denied_asked["id"], approve=False)
    assert (await follow.until("turn-finished"))["status"] == "denied"

    calls = [
        (e["event"], e["data"]["callId"], e["data"]["tool"], e["data"].get("outcome"))
        for e in follow.seen
        if e["event"].startswith("tool-call-")
    ]
    assert calls == [
        ("tool-call-started", f"{first}.1", "snapshot", None),
        ("tool-call-finished", f"{first}.1", "snapshot", "ok"),
        ("tool-call-started", f"{first}.2", "click", None),
        ("tool-call-finished", f"{first}.2", "click", "ok"),
        ("tool-call-started", f"{second}.1", "open", None),
        ("tool-call-finished", f"{second}.1", "open", "ok"),
        ("tool-call-finished", f"{third}.1", "click", "refused"),
    ]
    asked = [click_asked["callId"], open_asked["callId"], denied_asked["callId"]]
    assert asked == [f"{first}.2", f"{second}.1", f"{third}.1"]
    opened_url = host.site.url("/panel/opened")
    assert open_asked["description"] == f"Open {opened_url} in a new tab"
    # The open's card names the tab it opened at once, with its title: Watch live is offered.
    opened = next(
        e["data"]
        for e in follow.seen
        if e["event"] == "tool-call-finished" and e["data"]["tool"] == "open"
    )
    engine = await host.services.browser.engine()
    assert engine.get_tab(host.team_id, opened["tabId"]).url == opened_url
    assert (opened["tabTitle"], opened["description"]) == (
        "Panel opened",
        open_asked["description"],
    )
    await eventually(lambda: host.effects("repeat") == 1)

    # Read back, each call has exactly one result and no provider id reaches a member.
    contents = await host.member.call("threads-v1/get", {"threadId": follow.thread_id})
    call_ids = [
        c["id"] for m in contents["messages"] if m["role"] == "assistant" for c in m["toolCalls"]
    ]
    result_ids = [m["callId"] for m in contents["messages"] if m["role"] == "tool"]
    assert call_ids == result_ids == [f"{first}.1", f"{first}.2", f"{second}.1", f"{third}.1"]
    assert "call_0" not in json.dumps(contents["messages"])
    denied = contents["messages"][-1]
    assert (denied["callId"], denied["isError"]) == (f"{third}.1", True)

    # The provider reads back the ids it gave, each call followed by its own result.
    sent = host.openai.requests[-1].messages()
    wire = [
        (m["role"], m.get("tool_call_id") or [c["id"] for c in m.get("tool_calls", [])])
        for m in sent
        if m["role"] in ("assistant", "tool") and (m.get("tool_calls") or m.get("tool_call_id"))
    ]
    assert wire == [
        ("assistant", ["call_0"]),
        ("tool", "call_0"),
        ("assistant", ["call_0"]),
        ("tool", "call_0"),
        ("assistant", ["call_0"]),
        ("tool", "call_0"),
    ]


# -- usage and budgets --------------------------------------------------------------------


async def test_each_model_request_is_recorded_as_the_provider_reported_it(
    host: TurnsHost,
) -> None:
    agent_id = await make_agent(host, provider="openai")
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "usage", agent_id, follow.thread_id)
    host.openai.script(
        ChunkStream()
        .role()
        .tool_call("call_look", "snapshot", {"tabId": tab_id})
        .finish("tool_calls")
        .usage(1200, 40, cached=1000, reasoning=30)
        .done()
        .reply(),
        ChunkStream()
        .role()
        .text("It shows a button.")
        .finish()
        .usage(1500, 9, cached=1100)
        .done()
        .reply(),
    )
    await send(follow, "What is on the page?")
    assert (await follow.until("turn-finished"))["status"] == "done"

    # What the provider reported is what the member's summary shows: one row per request.
    summary = await host.member.call("usage-v1/summary", {"by": ["agent", "model"]})
    [row] = [r for r in summary["rows"] if r["key"]["agent"] == agent_id]
    assert row["key"]["model"] == "gpt-4.1"
    assert {k: row[k] for k in row if k.endswith("Tokens") or k == "requests"} == {
        "requests": 2,
        "inputTokens": 2700,
        "outputTokens": 49,
        "cacheReadTokens": 2100,
        "cacheWriteTokens": 0,
        "reasoningTokens": 30,
    }
    # A model genai-prices lists has a price; the admin sees the member's use too.
    assert row["costUsd"] is not None
    assert row["unpricedRequests"] == 0
    team = await host.admin.call("usage-v1/summary", {"by": ["agent", "member"]})
    [seen] = [r for r in team["rows"] if r["key"]["agent"] == agent_id]
    assert seen["requests"] == 2
    assert seen["key"]["member"] != ""
    exported = await host.member.call("usage-v1/csv", {"by": ["agent"]})
    assert exported["csv"].splitlines()[0].startswith('"agent","requests"')

    # The owner's own turn with the agent is the owner's: the member, naming the owner,
    # still reads only their own use.
    owner_follow = await start_thread(host, agent_id, host.admin)
    host.openai.script(openai_text("Hello."))
    await send(owner_follow, "Hi")
    assert (await owner_follow.until("turn-finished"))["status"] == "done"
    owner_id = (await host.admin.call("host-v1/whoami"))["accountId"]
    asked = await host.member.call(
        "usage-v1/summary", {"by": ["agent", "member"], "accountId": owner_id}
    )
    assert [r["key"]["member"] for r in asked["rows"] if r["key"]["agent"] == agent_id] == [
        seen["key"]["member"]
    ]
    both = await host.admin.call("usage-v1/summary", {"by": ["agent", "member"]})
    members = {r["key"]["member"] for r in both["rows"] if r["key"]["agent"] == agent_id}
    assert members == {seen["key"]["member"], owner_id}


async def test_a_budget_spent_mid_turn_ends_it_after_the_current_request(host: TurnsHost) -> None:
    agent_id = await make_agent(host)
    assert await refused(host.member, "budgets-v1/list", {}) == "forbidden"
    budget = await host.admin.call(
        "budgets-v1/create",
        {
            "name": "Scout's tokens",
            "scope": "agent",
            "targetId": agent_id,
            "unit": "tokens",
            "amount": "1000",
        },
    )
    follow = await start_thread(host, agent_id)
    tab_id = await open_panel(host, "budget", agent_id, follow.thread_id)
    # One request of 1,100 input tokens (900 read from the cache) spends the budget: its
    # call still runs, and the turn stops before it would ask the model again.
    host.anthropic.script(
        MessageEvents(input_tokens=200, cache_read=900)
        .tool_use("toolu_budget", "snapshot", {"tabId": tab_id})
        .stop("tool_use")
        .reply()
    )
    await send(follow, "Look around")
    finished = await follow.until("turn-finished")
    assert (finished["status"], finished["code"]) == ("budget", "budgetExceeded")
    assert "“Scout's tokens”" in finished["reason"]
    assert ("tool-call-finished", "snapshot", "ok") in follow.tools()
    assert len(host.anthropic.requests) >= 1

    # A new turn is refused before it starts, with the sentence that names the budget.
    assert (
        await refused(
            host.member, "threads-v1/send", {"threadId": follow.thread_id, "text": "Again"}
        )
        == "budgetExceeded"
    )
    [listed] = [
        b for b in (await host.admin.call("budgets-v1/list"))["budgets"] if b["id"] == budget["id"]
    ]
    assert int(listed["used"]) >= 1100
    assert listed["percent"] >= 100

    # Raised, the agent works again.
    await host.admin.call(
        "budgets-v1/update",
        {
            "id": budget["id"],
            "name": "Scout's tokens",
            "scope": "agent",
            "targetId": agent_id,
            "unit": "tokens",
            "amount": "100000",
        },
    )
    host.anthropic.script(MessageEvents().text("Carrying on.").stop().reply())
    await send(follow, "Go on")
    assert (await follow.until("turn-finished"))["status"] == "done"
    await host.admin.call("budgets-v1/delete", {"id": budget["id"]})


async def test_a_failed_reply_is_counted_and_its_retry_checks_the_budget_first(
    host: TurnsHost,
) -> None:
    agent_id = await make_agent(host)
    budget = await host.admin.call(
        "budgets-v1/create",
        {
            "name": "Retry tokens",
            "scope": "agent",
            "targetId": agent_id,
            "unit": "tokens",
            "amount": "1000",
        },
    )
    follow = await start_thread(host, agent_id)
    before = len(host.anthropic.requests)
    # The provider counts 1,100 input tokens, starts the reply and is then overloaded: the
    # turn would ask again, but the tokens of the broken reply spent the budget.
    host.anthropic.script(
        MessageEvents(input_tokens=1100).text("Hal").error("overloaded_error").reply()
    )
    await send(follow, "Hello")
    finished = await follow.until("turn-finished")
    assert (finished["status"], finished["code"]) == ("budget", "budgetExceeded")
    assert len(host.anthropic.requests) == before + 1

    summary = await host.member.call("usage-v1/summary", {"by": ["agent"]})
    [row] = [r for r in summary["rows"] if r["key"]["agent"] == agent_id]
    assert (row["requests"], row["inputTokens"], row["outputTokens"]) == (1, 1100, 1)
    await host.admin.call("budgets-v1/delete", {"id": budget["id"]})
