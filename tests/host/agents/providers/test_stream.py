"""What every adapter shares: error bodies read whole, keep-alives bounded, bad shapes
refused, upstream text redacted, and the tokens of a failed reply kept."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Literal

import aiohttp

from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.events import Failed, Finished, Usage
from server.host.agents.providers.openai import OpenAIProvider
from server.host.agents.providers.retry import RetryPolicy
from server.host.agents.providers.stream import HttpOptions, ModelRequest
from server.host.agents.providers.transcript import UserMessage
from tests.host.agents.providers.helpers import RecordedSleep, read_all
from tests.support.clock import FakeClock
from tests.support.fakes.anthropic import (
    API_KEY,
    PING,
    FakeAnthropic,
    MessageEvents,
    anthropic_error,
)
from tests.support.fakes.openai import API_KEY as OPENAI_KEY
from tests.support.fakes.openai import ChunkStream, FakeChatCompletions, openai_error
from tests.support.fakes.server import ErrorReply

REQUEST = ModelRequest(model="m", messages=[UserMessage(text="Hi")])


class Ticks:
    """A monotonic clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def anthropic(
    session: aiohttp.ClientSession, fake: FakeAnthropic, http: HttpOptions
) -> AnthropicProvider:
    return AnthropicProvider(session, api_key=API_KEY, base_url=fake.base_url, http=http)


def openai(
    session: aiohttp.ClientSession, fake: FakeChatCompletions, http: HttpOptions
) -> OpenAIProvider:
    flavour: Literal["openai", "openrouter"] = (
        "openrouter" if fake.flavour == "openrouter" else "openai"
    )
    return OpenAIProvider(
        session, flavour=flavour, api_key=OPENAI_KEY, base_url=fake.base_url, http=http
    )


async def test_a_quota_refusal_sent_in_two_chunks_is_read_whole_and_not_retried(
    session: aiohttp.ClientSession,
    fake_openai: FakeChatCompletions,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    refusal = openai_error(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        error_type="insufficient_quota",
        code="insufficient_quota",
    )
    fake_openai.script(replace(refusal, split_at=20))

    events = await read_all(openai(session, fake_openai, http).stream(REQUEST))

    assert isinstance(events[-1], Failed)
    assert events[-1].error.kind == "quota"
    assert "exceeded your current quota" in events[-1].error.message
    assert len(fake_openai.requests) == 1
    assert sleeps.delays == []


async def test_a_json_error_in_a_200_answer_sent_in_two_chunks_is_the_providers_error(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    refusal = anthropic_error(200, "invalid_request_error", "prompt is too long")
    fake_anthropic.script(replace(refusal, split_at=15))

    events = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))

    assert isinstance(events[-1], Failed)
    assert events[-1].error.kind == "invalid_request"
    assert "prompt is too long" in events[-1].error.message


async def test_a_reason_phrase_is_redacted_and_short(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    reason = f"Bad Gateway for {OPENAI_KEY} " + "x" * 400
    fake_openai.script(ErrorReply(502, "<html>bad gateway</html>", reason=reason))
    http = replace(http, retry=RetryPolicy(retry_kinds=frozenset()))

    events = await read_all(openai(session, fake_openai, http).stream(REQUEST))

    assert isinstance(events[-1], Failed)
    message = events[-1].error.message
    assert OPENAI_KEY not in message
    assert "[redacted]" in message
    assert len(message) < 160


async def test_a_tool_call_id_that_is_not_a_string_is_a_malformed_stream(
    session: aiohttp.ClientSession,
    fake_openai: FakeChatCompletions,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
) -> None:
    fake_openai.script(
        ChunkStream().role().tool_call(123, "read_page", {}).finish("tool_calls").done().reply(),
        ChunkStream().role().tool_call("call_1", 7, {}).finish("tool_calls").done().reply(),
    )
    fake_anthropic.script(MessageEvents().tool_use(123, "read_page", {}).stop("tool_use").reply())

    for stream in (
        openai(session, fake_openai, http).stream(REQUEST),
        openai(session, fake_openai, http).stream(REQUEST),
        anthropic(session, fake_anthropic, http).stream(REQUEST),
    ):
        events = await read_all(stream)  # never raises
        assert isinstance(events[-1], Failed)
        assert events[-1].error.kind == "malformed_stream"
        assert stream.reply.tool_calls == []


async def test_keep_alives_without_a_reply_end_it_with_a_timeout(
    session: aiohttp.ClientSession,
    fake_openrouter: FakeChatCompletions,
    fake_anthropic: FakeAnthropic,
    sleeps: RecordedSleep,
    clock: FakeClock,
) -> None:
    http = HttpOptions(
        read_timeout=30,
        progress_timeout=10,
        monotonic=Ticks(),
        sleep=sleeps,
        clock=clock,
        rng=random.Random(7),
    )
    done = ChunkStream().role().text("Hi").finish().usage(3, 1).done()
    fake_openrouter.script(done.reply(keep_alive_after=0, keep_alives=200))
    fake_anthropic.script(
        MessageEvents()
        .text("Hi")
        .stop()
        .reply(keep_alive_after=0, keep_alives=200, keep_alive=PING)
    )

    for stream in (
        openai(session, fake_openrouter, http).stream(REQUEST),
        anthropic(session, fake_anthropic, http).stream(REQUEST),
    ):
        events = await read_all(stream)
        assert isinstance(events[-1], Failed)
        assert events[-1].error.kind == "timeout"
        assert "keep-alives" in events[-1].error.message


async def test_keep_alives_between_parts_of_a_reply_are_not_a_timeout(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    sleeps: RecordedSleep,
    clock: FakeClock,
) -> None:
    http = HttpOptions(progress_timeout=1000, monotonic=Ticks(), sleep=sleeps, clock=clock)
    fake_anthropic.script(
        MessageEvents().text("Hi").stop().reply(keep_alive_after=0, keep_alives=5, keep_alive=PING)
    )

    events = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))

    assert isinstance(events[-1], Finished)


async def test_a_reply_that_fails_after_its_usage_keeps_the_usage(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    fake_openrouter: FakeChatCompletions,
    http: HttpOptions,
) -> None:
    fake_anthropic.script(MessageEvents(input_tokens=500).text("Hal").error("api_error").reply())
    # OpenRouter puts the usage counted so far in a chunk before its in-stream error.
    fake_openrouter.script(
        ChunkStream().role().text("Hal").usage(700, 2).error("upstream failed").reply()
    )

    anthropic_stream = anthropic(session, fake_anthropic, http).stream(REQUEST)
    events = await read_all(anthropic_stream)
    assert isinstance(events[-1], Failed)
    assert events[-1].usage == Usage(500, 1)
    assert anthropic_stream.counted == Usage(500, 1)

    events = await read_all(openai(session, fake_openrouter, http).stream(REQUEST))
    assert isinstance(events[-1], Failed)
    assert events[-1].usage == Usage(700, 2)


async def test_the_usage_of_a_retried_attempt_counts_in_the_reply(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents(input_tokens=400).error("overloaded_error").reply(),
        MessageEvents(input_tokens=400).text("Fine.").stop(output_tokens=3).reply(),
    )

    events = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))

    assert isinstance(events[-1], Finished)
    assert [e for e in events if isinstance(e, Usage)] == [Usage(800, 4)]
