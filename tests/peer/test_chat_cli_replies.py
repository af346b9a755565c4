"""``crewhost-peer chat`` as a real process when the reply is asked again, cut at its
token limit, or follows a turn still running."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.peer.test_chat_cli import (  # noqa: F401 - fixtures
    agent_ready,
    anthropic_fake,
    cli_ok,
    database,
    said_last,
)
from tests.peer.test_cli import peer_cli
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.server import StreamReply
from tests.support.hub_server import RunningHub


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
