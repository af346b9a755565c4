"""The Anthropic adapter against a local Messages API that speaks the real wire format."""

from __future__ import annotations

import socket

import aiohttp
import pytest

from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.events import (
    Failed,
    Finished,
    StreamTextDelta,
    StreamToolCallFinished,
    StreamToolCallStarted,
    ToolCallArgumentsDelta,
    ToolCallDropped,
    ToolCallInvalid,
    Usage,
)
from server.host.agents.providers.stream import HttpOptions, ModelRequest
from server.host.agents.providers.transcript import (
    AnyMessage,
    AssistantMessage,
    ToolCall,
    ToolResult,
    UserMessage,
    close_dangling_calls,
)
from tests.host.agents.providers.helpers import READ_PAGE, read_all
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents, anthropic_error
from tests.support.fakes.server import StreamReply

ASK: list[AnyMessage] = [UserMessage(text="What does the page say?")]


def provider(
    session: aiohttp.ClientSession, fake: FakeAnthropic, http: HttpOptions
) -> AnthropicProvider:
    return AnthropicProvider(session, api_key=API_KEY, base_url=fake.base_url, http=http)


def request(messages: list[AnyMessage] = ASK) -> ModelRequest:
    return ModelRequest(
        model="claude-fake", messages=messages, system="Be careful.", tools=[READ_PAGE]
    )


async def test_text_streams_in_pieces_cut_anywhere_with_pings(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents()
        .ping()
        .text("Pricing ", "starts at ", "€9 ✓")
        .ping()
        .stop()
        .reply(chunk_size=5, seed=3)
    )
    stream = provider(session, fake_anthropic, http).stream(request())
    events = await read_all(stream)

    assert events == [
        StreamTextDelta("Pricing "),
        StreamTextDelta("starts at "),
        StreamTextDelta("€9 ✓"),
        Usage(21, 4),
        Finished("end_turn", "end_turn"),
    ]
    assert stream.reply.message() == AssistantMessage(text="Pricing starts at €9 ✓")
    sent = fake_anthropic.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == API_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body == {
        "model": "claude-fake",
        "max_tokens": 4096,
        "stream": True,
        "system": "Be careful.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "What does the page say?"}]}
        ],
        "tools": [
            {
                "name": "read_page",
                "description": "Reads the page.",
                "input_schema": READ_PAGE.input_schema,
            }
        ],
    }


async def test_a_tool_input_split_across_deltas_and_crlf_chunks(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    arguments = {"selector": "#price", "note": "naïve 🙂"}
    fake_anthropic.script(
        MessageEvents()
        .text("Let me look.")
        .tool_use("toolu_01", "read_page", arguments, pieces=4)
        .stop("tool_use")
        .reply(line_end="\r\n", chunk_size=3)
    )
    stream = provider(session, fake_anthropic, http).stream(request())
    events = await read_all(stream)

    fragments = [e.json_fragment for e in events if isinstance(e, ToolCallArgumentsDelta)]
    assert len(fragments) == 4
    assert events[0] == StreamTextDelta("Let me look.")
    assert events[1] == StreamToolCallStarted("toolu_01", "read_page")
    assert events[-3:] == [
        StreamToolCallFinished("toolu_01", "read_page", arguments),
        Usage(21, 6),
        Finished("tool_use", "tool_use"),
    ]
    assert stream.reply.message().tool_calls == (
        ToolCall(id="toolu_01", name="read_page", arguments=arguments),
    )


async def test_the_transcript_continues_with_tool_results(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    adapter = provider(session, fake_anthropic, http)
    fake_anthropic.script(
        MessageEvents().tool_use("toolu_01", "read_page", {}).stop("tool_use").reply(),
        MessageEvents().text("It says hello.").stop().reply(),
    )
    first = adapter.stream(request())
    await read_all(first)
    transcript: list[AnyMessage] = [
        *ASK,
        first.reply.message(),
        ToolResult(call_id="toolu_01", content="hello"),
        UserMessage(text="And?"),
    ]
    second = adapter.stream(request(transcript))
    events = await read_all(second)

    assert events[-1] == Finished("end_turn", "end_turn")
    assert fake_anthropic.requests[1].messages()[1:] == [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_01", "name": "read_page", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "hello"},
                {"type": "text", "text": "And?"},
            ],
        },
    ]


async def test_a_dangling_tool_call_is_refused_like_the_real_api_until_closed(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    adapter = provider(session, fake_anthropic, http)
    dangling: list[AnyMessage] = [
        *ASK,
        AssistantMessage(tool_calls=(ToolCall(id="toolu_07", name="read_page"),)),
        UserMessage(text="Never mind."),
    ]
    fake_anthropic.script(MessageEvents().text("OK.").stop().reply())

    refused = await read_all(adapter.stream(request(dangling)))
    accepted = await read_all(adapter.stream(request(close_dangling_calls(dangling, "denied"))))

    [failed] = refused
    assert isinstance(failed, Failed)
    assert failed.error.kind == "invalid_request"
    assert failed.error.status == 400
    assert not failed.error.retryable
    assert "`tool_use` ids were found without `tool_result` blocks" in failed.error.message
    assert failed.error.message.startswith("Anthropic refused the request (400): messages.1:")
    assert accepted[-1] == Finished("end_turn", "end_turn")
    assert fake_anthropic.requests[1].messages()[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_07",
        "content": "denied",
        "is_error": True,
    }


async def test_max_tokens_cutting_a_tool_input_drops_that_call(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents()
        .tool_use("toolu_a", "read_page", {"selector": "h1"})
        .tool_use("toolu_b", "read_page", {"selector": "#long-selector"}, keep=15)
        .stop("max_tokens")
        .reply(chunk_size=7)
    )
    stream = provider(session, fake_anthropic, http).stream(request())
    events = await read_all(stream)

    verdicts = [e for e in events if isinstance(e, StreamToolCallFinished | ToolCallDropped)]
    assert verdicts[0] == StreamToolCallFinished("toolu_a", "read_page", {"selector": "h1"})
    assert isinstance(verdicts[1], ToolCallDropped)
    assert verdicts[1].id == "toolu_b"
    assert "max_tokens" in verdicts[1].reason
    assert events[-1] == Finished("max_tokens", "max_tokens")
    assert [call.id for call in stream.reply.message().tool_calls] == ["toolu_a"]
    assert stream.reply.dropped_calls == [verdicts[1]]


async def test_malformed_tool_input_is_an_invalid_call_not_an_exception(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents().tool_use("toolu_x", "read_page", '{"selector": ').stop("tool_use").reply()
    )
    stream = provider(session, fake_anthropic, http).stream(request())
    events = await read_all(stream)

    invalid = [e for e in events if isinstance(e, ToolCallInvalid)]
    assert len(invalid) == 1
    assert invalid[0].raw_arguments == '{"selector": '
    assert "not valid JSON" in invalid[0].reason
    assert stream.reply.message().tool_calls == (ToolCall(id="toolu_x", name="read_page"),)


async def test_thinking_blocks_are_ignored(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(MessageEvents().thinking("hmm").text("Done.").stop().reply())
    events = await read_all(provider(session, fake_anthropic, http).stream(request()))
    assert events[0] == StreamTextDelta("Done.")
    assert events[-1] == Finished("end_turn", "end_turn")


async def test_a_wrong_key_is_refused_without_retrying_or_repeating_it(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    wrong = "sk-ant-wrong-key-000000000000"
    adapter = AnthropicProvider(session, api_key=wrong, base_url=fake_anthropic.base_url, http=http)
    [failed] = await read_all(adapter.stream(request()))

    assert isinstance(failed, Failed)
    assert failed.error.kind == "authentication"
    assert failed.error.status == 401
    assert failed.error.message == "Anthropic refused the API key (401): invalid x-api-key"
    assert wrong not in repr(failed.error)
    assert len(fake_anthropic.requests) == 1


async def test_no_key_fails_without_a_request(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    adapter = AnthropicProvider(session, api_key=None, base_url=fake_anthropic.base_url, http=http)
    [failed] = await read_all(adapter.stream(request()))
    assert isinstance(failed, Failed)
    assert failed.error.kind == "no_key"
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(
    ("status", "error_type", "kind", "text"),
    [
        (400, "invalid_request_error", "invalid_request", "max_tokens: too large"),
        (404, "not_found_error", "not_found", "model: claude-nope"),
        (500, "api_error", "server_error", "Internal server error"),
        (403, "permission_error", "permission", "not allowed"),
    ],
)
async def test_http_errors_carry_the_providers_own_message(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    status: int,
    error_type: str,
    kind: str,
    text: str,
) -> None:
    fake_anthropic.script(anthropic_error(status, error_type, text))
    [failed] = await read_all(provider(session, fake_anthropic, http).stream(request()))
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.status) == (kind, status)
    assert failed.error.message.endswith(f"({status}): {text}")


async def test_an_error_without_a_json_body_still_reads_well(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    from tests.support.fakes.server import ErrorReply

    fake_anthropic.script(ErrorReply(502, "<html>Bad Gateway</html>"))
    [failed] = await read_all(provider(session, fake_anthropic, http).stream(request()))
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.message) == (
        "server_error",
        "Anthropic answered 502 Bad Gateway",
    )


async def test_a_connection_dropped_mid_reply_is_a_network_error(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents().text("Half", " a reply").stop().reply(chunk_size=40, drop_after=5)
    )
    stream = provider(session, fake_anthropic, http).stream(request())
    events = await read_all(stream)
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.kind == "network"
    assert failed.error.retryable


async def test_a_stream_that_ends_early_is_a_network_error(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    body = MessageEvents().text("Cut").body()
    fake_anthropic.script(StreamReply(body))  # no message_stop
    events = await read_all(provider(session, fake_anthropic, http).stream(request()))
    assert events[0] == StreamTextDelta("Cut")
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.started) == ("network", True)
    assert "ended before the reply was complete" in failed.error.message


async def test_a_silent_server_times_out_between_chunks(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(MessageEvents().text("Slow").stop().reply(chunk_size=30, stall_after=2))
    quick = HttpOptions(read_timeout=0.3, sleep=http.sleep, clock=http.clock)
    events = await read_all(provider(session, fake_anthropic, quick).stream(request()))
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.kind == "timeout"
    assert failed.error.message == "Anthropic sent nothing for 0.3s"


async def test_nobody_listening_is_a_network_error(
    session: aiohttp.ClientSession, http: HttpOptions
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = AnthropicProvider(
        session, api_key=API_KEY, base_url=f"http://127.0.0.1:{port}", http=http
    )
    [failed] = await read_all(adapter.stream(request()))
    assert isinstance(failed, Failed)
    assert failed.error.kind == "network"
    assert failed.error.message.startswith(f"could not connect to Anthropic at 127.0.0.1:{port}")


async def test_leaving_a_stream_early_releases_it(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents().text("one", "two", "three").stop().reply(chunk_size=10),
        MessageEvents().text("again").stop().reply(),
    )
    adapter = provider(session, fake_anthropic, http)
    async with adapter.stream(request()) as stream:
        async for event in stream:
            assert event == StreamTextDelta("one")
            break
    events = await read_all(adapter.stream(request()))
    assert events[0] == StreamTextDelta("again")


def test_the_base_url_may_end_in_v1() -> None:
    from server.host.agents.providers.anthropic import AnthropicWire

    assert (
        AnthropicWire(api_key="k", base_url="https://x.test/").url == "https://x.test/v1/messages"
    )
    assert (
        AnthropicWire(api_key="k", base_url="https://x.test/v1").url == "https://x.test/v1/messages"
    )


async def test_a_zero_latency_fake_gives_the_same_events(
    session: aiohttp.ClientSession, http: HttpOptions
) -> None:
    script = (
        MessageEvents().text("a", "b").tool_use("toolu_z", "read_page", {"n": 1}).stop("tool_use")
    )
    async with FakeAnthropic(latency=0) as fast, FakeAnthropic() as paced:
        fast.script(script.reply(chunk_size=2))
        paced.script(script.reply(chunk_size=2))
        fast_events = await read_all(provider(session, fast, http).stream(request()))
        paced_events = await read_all(provider(session, paced, http).stream(request()))
    assert fast_events == paced_events
    assert fast_events[-1] == Finished("tool_use", "tool_use")


async def test_cache_reads_and_writes_are_counted_apart_and_in_the_input(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, http: HttpOptions
) -> None:
    fake_anthropic.script(
        MessageEvents(input_tokens=12, cache_read=3000, cache_write=500)
        .text("Cached.")
        .stop()
        .reply()
    )
    events = await read_all(provider(session, fake_anthropic, http).stream(request()))
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage == Usage(
        input_tokens=3512, output_tokens=2, cache_read_tokens=3000, cache_write_tokens=500
    )
