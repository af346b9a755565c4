"""``crewhost-peer chat`` facing events of another release and terminals that cannot show
every character, on a real connection to the hub's built-in host, the agent on a local fake
Anthropic. The events a host of another release would send (fields missing or of another
type) are put in that real connection's event queue among the real turn's own."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from peer import cli
from peer.chat import StdinLines, TerminalChat
from peer.connection import HostConnection
from tests.host.routes.test_delegation import stalled
from tests.peer.test_chat_cli import (  # noqa: F401 - fixtures
    agent_ready,
    anthropic_fake,
    cli_ok,
    database,
    opens_a_tab,
)
from tests.peer.test_chat_cli_waiting import server  # noqa: F401 - one turn at a time
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member, wait_linked
from tests.support.waiting import eventually

WAITING = "(waiting: the team runs as many turns as the host allows)\n"


@pytest.fixture
async def connection(
    server: RunningHub,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    anthropic: FakeAnthropic,
) -> AsyncIterator[HostConnection]:
    """The owner's real connection to the built-in host, Scout ready on the fake Anthropic."""
    await agent_ready(server, tmp_path / "cli", anthropic)
    member = await peer_member(server, "owner@example.com", tmp_path)
    connected = await member.connect(await wait_linked(server))
    try:
        yield connected
    finally:
        await connected.close()
        await member.hub.close()


async def new_thread(connection: HostConnection) -> str:
    agents = (await connection.call("agents-v1/list"))["agents"]
    started = await connection.call("threads-v1/start", {"agentId": agents[0]["id"]})
    return str(started["id"])


def event(name: str, **data: object) -> dict[str, Any]:
    """An event of the team-api channel, as the connection queues it."""
    return {"event": name, "data": data}


async def next_of(connection: HostConnection, name: str, thread_id: str) -> dict[str, Any]:
    """The data of the next event ``name`` of ``thread_id`` the connection receives."""
    while True:
        message = await asyncio.wait_for(connection.events.get(), 60)
        if message["event"] == name and message["data"].get("threadId") == thread_id:
            return dict(message["data"])


async def test_events_missing_their_fields_are_shown_as_far_as_they_go(
    connection: HostConnection, anthropic: FakeAnthropic
) -> None:
    thread = await new_thread(connection)
    # The model says something, then holds its reply: the turn runs until it is stopped.
    anthropic.script(stalled("Looking"))
    out, err = io.StringIO(), io.StringIO()
    chat = TerminalChat(
        connection, thread, StdinLines(io.StringIO("")), out=out, err=err, interactive=False
    )
    turn = asyncio.ensure_future(chat.turn("Hi"))
    await eventually(lambda: out.getvalue() == "Looking", 60)
    turn_id = (await connection.call("threads-v1/get", {"threadId": thread}))["runningTurnId"]
    assert turn_id

    def of_turn(name: str, **data: object) -> dict[str, Any]:
        return event(name, threadId=thread, turnId=turn_id, **data)

    for injected in (
        of_turn("turn-waiting"),
        of_turn("turn-waiting", ahead="two"),
        of_turn("turn-running"),
        of_turn("turn-text"),
        of_turn("turn-text-reset"),
        of_turn("tool-call-started", callId="call-1"),
        of_turn("tool-call-finished", callId="call-1", outcome="ok"),
        of_turn("tool-call-started", tool="open"),
        of_turn("tool-call-finished"),
        of_turn("attention-requested", kind="consent"),
        of_turn("attention-resolved"),
        event("queued-message-taken", threadId=thread),
        of_turn("turn-text", text=["not", "text"]),
        of_turn("turn-text", text="Hello"),
        of_turn("turn-finished"),
    ):
        connection.events.put_nowait(injected)

    code = await asyncio.wait_for(turn, 60)

    assert (code, err.getvalue()) == (1, "")
    assert out.getvalue() == (
        "Looking\n"
        f"{WAITING}"
        f"{WAITING}"
        "(running)\n"
        "(the reply broke off and starts again)\n"
        "· a call -> ok\n"
        "· a call -> finished\n"
        "Hello\n"
        "turn ended\n"
    )
    # The connection still serves: the real turn is stopped through it, and ends so.
    await connection.call("threads-v1/stop", {"threadId": thread})
    finished = await next_of(connection, "turn-finished", thread)
    assert (finished["turnId"], finished["status"]) == (turn_id, "stopped")
    assert len(anthropic.requests) == 1


async def test_a_consent_question_without_a_summary_is_still_asked(
    connection: HostConnection, anthropic: FakeAnthropic
) -> None:
    anthropic.script(
        opens_a_tab(),
        MessageEvents().text("It is open.").stop().reply(),
        MessageEvents().text("Hello.").stop().reply(),
    )
    # Another thread's turn holds the team's one place, its call waiting for consent.
    other = await new_thread(connection)
    await connection.call("threads-v1/send", {"threadId": other, "text": "Open a tab"})
    question = await next_of(connection, "attention-requested", other)
    thread = await new_thread(connection)
    # That question as a host of another release might put it to this thread: no summary.
    connection.events.put_nowait(
        event("attention-requested", threadId=thread, kind="consent", id=question["id"])
    )
    out, err = io.StringIO(), io.StringIO()
    chat = TerminalChat(
        connection, thread, StdinLines(io.StringIO("y\n")), out=out, err=err, interactive=False
    )

    # The chat's turn runs once the other is done, which is once the answer was taken.
    assert await asyncio.wait_for(chat.turn("Hi"), 60) == 0
    assert err.getvalue() == "allow a call? [y/N] "
    assert out.getvalue() == f"{WAITING}(running)\nHello.\nturn done\n"
    tabs = await connection.call("browser-control-v1/list_tabs")
    assert len(tabs["tabs"]) == 1


async def test_text_the_terminal_cannot_show_is_replaced(
    monkeypatch: pytest.MonkeyPatch,
    server: RunningHub,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    anthropic: FakeAnthropic,
) -> None:
    scout = await agent_ready(server, tmp_path, anthropic)
    await cli_ok(tmp_path, "call", "agents-v1/update", json.dumps({"id": scout, "name": "Scout ✓"}))
    anthropic.script(MessageEvents().text("Checked ✓").stop().reply())
    monkeypatch.setenv("CREWHOST_PEER_HOME", str(tmp_path))
    # A latin-1 terminal for the answer, a cp1252 pipe for the notes.
    out = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    err = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))

    # In a thread of its own: ``main`` runs its own event loop, beside the hub's.
    code = await asyncio.to_thread(cli.main, ["chat", scout, "Check the page"])

    out.flush()
    err.flush()
    said = err.buffer.getvalue().decode("cp1252")
    thread = said.split()[1]
    assert said == f"thread {thread} with Scout ?\n"
    assert out.buffer.getvalue().decode("latin-1") == "Checked ?\nturn done\n"
    assert code == 0
