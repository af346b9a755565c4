"""``crewhost-peer chat`` as a real process when the agent's call is gated, and when the
person stops the turn with Ctrl-C."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

from tests.peer.test_chat_cli import (  # noqa: F401 - fixtures
    agent_ready,
    anthropic_fake,
    cli_ok,
    database,
    opens_a_tab,
    said_last,
)
from tests.peer.test_cli import peer_cli
from tests.support import commands
from tests.support.commands import DEVNULL, PEER, PIPE
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.fakes.server import StreamReply
from tests.support.hub_server import RunningHub


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
    process = await commands.start(
        PEER,
        "chat",
        "Scout",
        "Think hard",
        stdin=DEVNULL,
        stdout=PIPE,
        stderr=PIPE,
        env={**os.environ, "CREWHOST_PEER_HOME": str(tmp_path)},
    )
    assert process.stdout is not None
    assert await asyncio.wait_for(process.stdout.readexactly(len("Thinking")), 60) == b"Thinking"

    process.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(process.communicate(), 60)

    assert process.returncode == 1, err
    assert out.decode() == "\nturn stopped: a member stopped the turn\n"
    assert err.decode().endswith("stopping the turn…\n")
