"""A transcript made on one wire format continues on the other, as each real API checks it."""

from __future__ import annotations

import aiohttp

from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.events import Finished
from server.host.agents.providers.openai import OpenAIProvider
from server.host.agents.providers.stream import HttpOptions, ModelRequest
from server.host.agents.providers.transcript import (
    AnyMessage,
    ToolResult,
    UserMessage,
    close_dangling_calls,
    transcript_problems,
)
from tests.host.agents.providers.helpers import READ_PAGE, read_all
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.fakes.openai import API_KEY as OPENAI_KEY
from tests.support.fakes.openai import ChunkStream, FakeChatCompletions


def request(messages: list[AnyMessage]) -> ModelRequest:
    return ModelRequest(model="m", messages=messages, system="s", tools=[READ_PAGE])


async def test_anthropic_then_openai_then_anthropic(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    fake_openrouter: FakeChatCompletions,
    http: HttpOptions,
) -> None:
    claude = AnthropicProvider(
        session, api_key=API_KEY, base_url=fake_anthropic.base_url, http=http
    )
    router = OpenAIProvider(
        session,
        flavour="openrouter",
        api_key=OPENAI_KEY,
        base_url=fake_openrouter.base_url,
        http=http,
    )
    fake_anthropic.script(
        MessageEvents()
        .text("Reading.")
        .tool_use("toolu_01A", "read_page", {"selector": "h1"})
        .stop("tool_use")
        .reply(),
        MessageEvents().text("Both say hello.").stop().reply(),
    )
    # A Kimi-style id, which Anthropic's id pattern refuses as it is.
    fake_openrouter.script(
        ChunkStream()
        .tool_call("functions.read_page:0", "read_page", {"selector": "h2"})
        .finish("tool_calls")
        .done()
        .reply()
    )
    transcript: list[AnyMessage] = [UserMessage(text="Read the headings")]

    first = claude.stream(request(transcript))
    await read_all(first)
    transcript += [first.reply.message(), ToolResult(call_id="toolu_01A", content="Hello")]

    second = router.stream(request(transcript))
    events = await read_all(second)
    assert events[-1] == Finished("tool_use", "tool_calls")
    transcript += [
        second.reply.message(),
        ToolResult(call_id="functions.read_page:0", content="Hello too"),
    ]
    assert transcript_problems(transcript) == []

    third = await read_all(claude.stream(request(transcript)))
    assert third[-1] == Finished("end_turn", "end_turn")
    sent = fake_anthropic.requests[1].messages()
    assert sent[3]["content"][0]["id"] == sent[4]["content"][0]["tool_use_id"]
    assert sent[3]["content"][0]["id"].startswith("call_")


async def test_a_dangling_call_from_one_wire_is_closed_for_the_other(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeChatCompletions,
    http: HttpOptions,
) -> None:
    gpt = OpenAIProvider(session, api_key=OPENAI_KEY, base_url=fake_openai.base_url, http=http)
    claude = AnthropicProvider(
        session, api_key=API_KEY, base_url=fake_anthropic.base_url, http=http
    )
    fake_openai.script(
        ChunkStream()
        .tool_call("call_a", "read_page", {"selector": "a"}, index=0)
        .tool_call("call_b", "click", {"selector": "b"}, index=1)
        .finish("tool_calls")
        .done()
        .reply()
    )
    fake_anthropic.script(MessageEvents().text("Stopped as asked.").stop().reply())
    transcript: list[AnyMessage] = [UserMessage(text="Go")]
    first = gpt.stream(request(transcript))
    await read_all(first)
    # The first call ran; the second was denied and the turn ended there.
    transcript += [first.reply.message(), ToolResult(call_id="call_a", content="ok")]
    transcript = close_dangling_calls(transcript, "the member denied this action")
    transcript.append(UserMessage(text="Continue elsewhere"))

    events = await read_all(claude.stream(request(transcript)))
    assert events[-1] == Finished("end_turn", "end_turn")
