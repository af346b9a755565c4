"""``crewhost-peer agents`` and ``chat`` as real processes, the agent on a local fake Anthropic."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.peer.test_cli import ROOT, login, peer_cli
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.fakes.server import StreamReply
from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """The CLI is about the terminal; threads' storage is tested on both backends elsewhere."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


async def cli_ok(home: Path, *args: str, stdin: bytes = b"") -> str:
    code, out, err = await peer_cli(home, *args, stdin=stdin)
    assert code == 0, err
    return out


async def agent_ready(server: RunningHub, home: Path, anthropic: FakeAnthropic) -> str:
    """Sign the owner in, point the team's Anthropic at the fake with its key, make an
    agent named Scout, all through the CLI; Scout's id."""
    await server.sign_up_owner()
    code, _, err = await login(home, server)
    assert code == 0, err
    await wait_linked(server)
    await cli_ok(home, "providers", "set", "anthropic", stdin=API_KEY.encode() + b"\n")
    update = {"provider": "anthropic", "baseUrl": anthropic.origin + "/v1"}
    await cli_ok(home, "call", "providers-v1/update", json.dumps(update))
    created = json.loads(await cli_ok(home, "call", "agents-v1/create", '{"name": "Scout"}'))
    return str(created["id"])


def said_last(anthropic: FakeAnthropic) -> object:
    """What the last message of the last request to the model held."""
    return anthropic.requests[-1].messages()[-1]["content"]


def opens_a_tab() -> StreamReply:
    return (
        MessageEvents()
        .text("Opening a tab.")
        .tool_use("toolu_1", "open", {})
        .stop("tool_use")
        .reply()
    )


async def test_agents_lists_each_agent_and_chat_refuses_an_unknown_one(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    scout = await agent_ready(server, tmp_path, anthropic)
    other = {"name": "Clerk of accounts", "provider": "openai", "model": "gpt-4.1-mini"}
    clerk = json.loads(await cli_ok(tmp_path, "call", "agents-v1/create", json.dumps(other)))

    out = await cli_ok(tmp_path, "agents")

    assert out.splitlines() == [
        f"{'ID':<{len(scout)}}  PROVIDER   MODEL                        NAME",
        f"{scout}  anthropic  claude-sonnet-4-5 (default)  Scout",
        f"{clerk['id']}  openai     gpt-4.1-mini                 Clerk of accounts",
    ]

    code, out, err = await peer_cli(tmp_path, "chat", "Nobody", "Hello")

    assert (code, out) == (1, "")
    assert err == (
        'crewhost-peer: no agent is named "Nobody" or has that id; '
        "`crewhost-peer agents` lists them (agentNotFound)\n"
    )
    assert anthropic.requests == []


async def test_chat_prints_the_reply_and_continues_a_thread(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    anthropic.script(MessageEvents().text("Hello", " there.").stop().reply())

    code, out, err = await peer_cli(tmp_path, "chat", "scout", "Say hello")

    assert (code, out) == (0, "Hello there.\nturn done\n"), err
    thread_id = err.split()[1]
    assert err == f"thread {thread_id} with Scout\n"
    assert said_last(anthropic) == [{"type": "text", "text": "Say hello"}]

    anthropic.script(MessageEvents().text("Again: hello.").stop().reply())
    code, out, err = await peer_cli(tmp_path, "chat", "Scout", "Once more", "--thread", thread_id)

    assert (code, out, err) == (0, "Again: hello.\nturn done\n", "")
    roles = [m["role"] for m in anthropic.requests[-1].messages()]
    assert roles == ["user", "assistant", "user"]


async def test_chat_without_a_message_reads_messages_from_stdin(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    anthropic.script(
        MessageEvents().text("One.").stop().reply(), MessageEvents().text("Two.").stop().reply()
    )

    code, out, err = await peer_cli(tmp_path, "chat", "Scout", stdin=b"first\n\nsecond\n")

    assert (code, out) == (0, "One.\nturn done\nTwo.\nturn done\n"), err
    assert [m["role"] for m in anthropic.requests[-1].messages()] == [
        "user",
        "assistant",
        "user",
    ]
    assert said_last(anthropic) == [{"type": "text", "text": "second"}]


async def test_a_gated_call_runs_when_the_person_answers_yes(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    anthropic.script(opens_a_tab(), MessageEvents().text("It is open.").stop().reply())

    code, out, err = await peer_cli(tmp_path, "chat", "Scout", "Open a tab", stdin=b"y\n")

    assert code == 0, err
    assert out == "Opening a tab.\n· Open a blank tab -> ok\nIt is open.\nturn done\n"
    # The host's description first; the raw call as its details.
    assert err.endswith("Open a blank tab\n  details: open {}\nallow? [y/N] ")
    result = said_last(anthropic)
    assert isinstance(result, list)
    assert result[0]["type"] == "tool_result"
    assert result[0].get("is_error", False) is False
    tabs = json.loads(await cli_ok(tmp_path, "call", "browser-control-v1/list_tabs"))["tabs"]
    assert len(tabs) == 1


async def test_a_gated_call_denied_ends_the_turn_denied(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    anthropic.script(opens_a_tab())

    code, out, err = await peer_cli(tmp_path, "chat", "Scout", "Open a tab", stdin=b"n\n")

    assert code == 1, err
    assert out == (
        "Opening a tab.\n"
        "· Open a blank tab -> refused (denied by a member)\n"
        "turn denied: a member denied open\n"
    )
    assert len(anthropic.requests) == 1
    assert anthropic.unplayed == 0
    tabs = json.loads(await cli_ok(tmp_path, "call", "browser-control-v1/list_tabs"))["tabs"]
    assert tabs == []


async def test_ctrl_c_stops_the_turn(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    # The reply's first piece says something; then the model goes quiet until stopped.
    start = MessageEvents().text("Thinking").body()
    anthropic.script(StreamReply(start + start, chunk_size=len(start), stall_after=1))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "peer.cli",
        "chat",
        "Scout",
        "Think hard",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "CREWHOST_PEER_HOME": str(tmp_path)},
    )
    assert process.stdout is not None
    assert await asyncio.wait_for(process.stdout.readexactly(len("Thinking")), 60) == b"Thinking"

    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 60)

    assert process.returncode == 1, err
    assert out.decode() == "\nturn stopped: a member stopped the turn\n"
    assert err.decode().endswith("stopping the turn…\n")


async def test_a_reply_asked_again_says_so_and_prints_the_new_text(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    # The first reply breaks off after its first words; the host asks the model again.
    said = MessageEvents().text("Partial").body()
    anthropic.script(
        StreamReply(said + said, chunk_size=len(said), drop_after=1),
        MessageEvents().text("Whole answer.").stop().reply(),
    )

    code, out, err = await peer_cli(tmp_path, "chat", "Scout", "Hello")

    assert (code, out) == (
        0,
        "Partial\n"
        "(the reply broke off and starts again: the connection to Anthropic broke in the"
        " middle of the reply)\n"
        "Whole answer.\n"
        "turn done\n",
    ), err


async def test_a_reply_cut_at_its_token_limit_ends_the_chat_incomplete(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    await agent_ready(server, tmp_path, anthropic)
    anthropic.script(
        MessageEvents()
        .text("Opening a tab.")
        .tool_use("toolu_1", "open", {"url": "https://example.com/"}, keep=12)
        .stop("max_tokens")
        .reply()
    )

    code, out, err = await peer_cli(tmp_path, "chat", "Scout", "Open a tab")

    assert (code, out) == (
        1,
        "Opening a tab.\n"
        "turn incomplete: the model's reply was cut at its token limit (4096 tokens) in the"
        " middle of its call of open; none of that reply's calls ran\n",
    ), err


async def called_until(home: Path, route: str, args: dict[str, Any], key: str) -> Any:
    """What ``route`` answers under ``key`` once it is not empty (a bound of 30 s)."""
    async with asyncio.timeout(30):
        while True:
            found = json.loads(await cli_ok(home, "call", route, json.dumps(args)))[key]
            if found:
                return found
            await asyncio.sleep(0.05)


async def test_a_message_sent_while_a_turn_runs_is_queued_and_its_turn_followed(
    server: RunningHub, tmp_path: Path, anthropic: FakeAnthropic
) -> None:
    scout = await agent_ready(server, tmp_path, anthropic)
    anthropic.script(
        MessageEvents()
        .tool_use("toolu_q", "ask_user", {"question": "Which size?"})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Size M.").stop().reply(),
        MessageEvents().text("Blue, then.").stop().reply(),
    )
    started = await cli_ok(tmp_path, "call", "threads-v1/start", json.dumps({"agentId": scout}))
    ref = {"threadId": json.loads(started)["id"]}
    await cli_ok(tmp_path, "call", "threads-v1/send", json.dumps({**ref, "text": "Order a shirt"}))
    [asked] = await called_until(tmp_path, "attention-v1/list", {}, "requests")

    chat = asyncio.ensure_future(
        peer_cli(tmp_path, "chat", "Scout", "And make it blue", "--thread", ref["threadId"])
    )
    await called_until(tmp_path, "threads-v1/get", ref, "queued")
    reply = {"id": asked["id"], "answer": "M"}
    await cli_ok(tmp_path, "call", "attention-v1/reply", json.dumps(reply))
    code, out, err = await asyncio.wait_for(chat, 60)

    assert (code, out) == (0, "Blue, then.\nturn done\n"), err
    assert err == "(queued: the agent is still answering; your message starts its next turn)\n"
    assert said_last(anthropic) == [{"type": "text", "text": "And make it blue"}]
