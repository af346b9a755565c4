"""``crewhost-peer agents`` and ``chat`` as real processes, the agent on a local fake Anthropic."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.peer.test_cli import login, peer_cli
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


@pytest.fixture(name="anthropic")
async def anthropic_fake() -> AsyncIterator[FakeAnthropic]:
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
    update = {"provider": "anthropic", "baseUrl": anthropic.origin + "/v1"}
    await cli_ok(home, "call", "providers-v1/update", json.dumps(update))
    await cli_ok(home, "providers", "set", "anthropic", stdin=API_KEY.encode() + b"\n")
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
