"""The Chat Completions adapter against local OpenAI, OpenRouter and Ollama fakes."""

from __future__ import annotations

import aiohttp
import pytest

from server.host.agents.providers.events import (
    MAX_REPORTED_TOKENS,
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
from server.host.agents.providers.openai import OpenAIProvider, chat_completions_url
from server.host.agents.providers.stream import HttpOptions, ModelRequest
from server.host.agents.providers.transcript import (
    AnyMessage,
    AssistantMessage,
    ToolCall,
    ToolResult,
    UserMessage,
    close_dangling_calls,
)
from tests.host.agents.providers.helpers import READ_PAGE, RecordedSleep, read_all
from tests.support.fakes.openai import API_KEY, ChunkStream, FakeChatCompletions, openai_error
from tests.support.fakes.server import ErrorReply, StreamReply

ASK: list[AnyMessage] = [UserMessage(text="What does the page say?")]


def openai(
    session: aiohttp.ClientSession, fake: FakeChatCompletions, http: HttpOptions
) -> OpenAIProvider:
    flavour = "custom" if fake.flavour == "ollama" else fake.flavour
    key = None if fake.flavour == "ollama" else API_KEY
    return OpenAIProvider(session, flavour=flavour, api_key=key, base_url=fake.base_url, http=http)


def request(messages: list[AnyMessage] = ASK) -> ModelRequest:
    return ModelRequest(
        model="gpt-fake", messages=messages, system="Be careful.", tools=[READ_PAGE]
    )


async def test_text_usage_and_done(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(
        ChunkStream()
        .role()
        .text("Pricing ", "starts at €9")
        .finish("stop")
        .usage(30, 4)
        .done()
        .reply(chunk_size=6, seed=1)
    )
    stream = openai(session, fake_openai, http).stream(request())
    events = await read_all(stream)

    assert events == [
        StreamTextDelta("Pricing "),
        StreamTextDelta("starts at €9"),
        Usage(30, 4),
        Finished("end_turn", "stop"),
    ]
    sent = fake_openai.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.body == {
        "model": "gpt-fake",
        "messages": [
            {"role": "system", "content": "Be careful."},
            {"role": "user", "content": "What does the page say?"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 4096,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_page",
                    "description": "Reads the page.",
                    "parameters": READ_PAGE.input_schema,
                },
            }
        ],
    }


async def test_tool_calls_by_index_across_chunks(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    first = {"selector": "h1"}
    second = {"selector": "#naïve-🙂"}
    fake_openai.script(
        ChunkStream()
        .role()
        .tool_call("call_a", "read_page", first, index=0, pieces=3)
        .tool_call("call_b", "read_page", second, index=1, pieces=5)
        .finish("tool_calls")
        .usage(40, 20)
        .done()
        .reply(chunk_size=4)
    )
    stream = openai(session, fake_openai, http).stream(request())
    events = await read_all(stream)

    assert events[0] == StreamToolCallStarted("call_a", "read_page")
    assert sum(isinstance(e, ToolCallArgumentsDelta) for e in events) == 8
    assert events[-4:] == [
        StreamToolCallFinished("call_a", "read_page", first),
        StreamToolCallFinished("call_b", "read_page", second),
        Usage(40, 20),
        Finished("tool_use", "tool_calls"),
    ]
    assert [call.id for call in stream.reply.message().tool_calls] == ["call_a", "call_b"]


async def test_the_transcript_continues_with_tool_messages(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    adapter = openai(session, fake_openai, http)
    fake_openai.script(
        ChunkStream()
        .text("Looking.")
        .tool_call("call_a", "read_page", {})
        .finish("tool_calls")
        .done()
        .reply(),
        ChunkStream().text("Hello.").finish().done().reply(),
    )
    first = adapter.stream(request())
    await read_all(first)
    transcript: list[AnyMessage] = [
        *ASK,
        first.reply.message(),
        ToolResult(call_id="call_a", content="no such element", is_error=True),
    ]
    events = await read_all(adapter.stream(request(transcript)))

    assert events[-1] == Finished("end_turn", "stop")
    assert fake_openai.requests[1].messages()[2:] == [
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read_page", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "Error: no such element"},
    ]


async def test_a_dangling_tool_call_is_refused_until_closed(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    adapter = openai(session, fake_openai, http)
    dangling: list[AnyMessage] = [
        *ASK,
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_a", name="read_page"),
                ToolCall(id="call_b", name="read_page"),
            )
        ),
        ToolResult(call_id="call_a", content="ok"),
    ]
    fake_openai.script(ChunkStream().text("OK.").finish().done().reply())

    [failed] = await read_all(adapter.stream(request(dangling)))
    accepted = await read_all(adapter.stream(request(close_dangling_calls(dangling, "capped"))))

    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.status) == ("invalid_request", 400)
    assert failed.error.message.startswith(
        "OpenAI refused the request (400): An assistant message with 'tool_calls' must be"
    )
    assert failed.error.message.endswith("did not have response messages: call_b")
    assert accepted[-1] == Finished("end_turn", "stop")


async def test_a_wrong_key_is_refused_and_never_repeated(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    wrong = "sk-wrong-0123456789abcdefghij"
    adapter = OpenAIProvider(session, api_key=wrong, base_url=fake_openai.base_url, http=http)
    [failed] = await read_all(adapter.stream(request()))

    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.status) == ("authentication", 401)
    assert failed.error.message.startswith("OpenAI refused the API key (401): Incorrect API key")
    assert wrong not in failed.error.message
    assert wrong[:-4] not in failed.error.message  # the provider's masked echo is gone too


async def test_openai_and_openrouter_need_a_key(
    session: aiohttp.ClientSession, http: HttpOptions
) -> None:
    for flavour in ("openai", "openrouter"):
        adapter = OpenAIProvider(session, flavour=flavour, api_key="", http=http)
        [failed] = await read_all(adapter.stream(request()))
        assert isinstance(failed, Failed)
        assert failed.error.kind == "no_key"


async def test_max_tokens_cutting_arguments_drops_the_call(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(
        ChunkStream()
        .tool_call("call_a", "read_page", '{"selector": "#lo')
        .finish("length")
        .done()
        .reply()
    )
    stream = openai(session, fake_openai, http).stream(request())
    events = await read_all(stream)
    dropped = [e for e in events if isinstance(e, ToolCallDropped)]
    assert [e.id for e in dropped] == ["call_a"]
    assert events[-1] == Finished("max_tokens", "length")
    assert stream.reply.message() == AssistantMessage()


async def test_arguments_that_are_not_an_object_make_an_invalid_call(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(
        ChunkStream().tool_call("call_a", "read_page", "[1, 2]").finish("tool_calls").done().reply()
    )
    events = await read_all(openai(session, fake_openai, http).stream(request()))
    [invalid] = [e for e in events if isinstance(e, ToolCallInvalid)]
    assert invalid.reason == "the arguments are not a JSON object"


async def test_openrouter_comments_path_and_usage(
    session: aiohttp.ClientSession, fake_openrouter: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openrouter.script(
        ChunkStream(provider="Anthropic")
        .comment()
        .comment()
        .role()
        .text("Hi")
        .comment()
        .finish("stop")
        .usage(12, 1)
        .done()
        .reply(chunk_size=9)
    )
    events = await read_all(openai(session, fake_openrouter, http).stream(request()))
    assert events == [StreamTextDelta("Hi"), Usage(12, 1), Finished("end_turn", "stop")]
    sent = fake_openrouter.requests[0]
    assert sent.path == "/api/v1/chat/completions"
    assert sent.body["max_tokens"] == 4096


async def test_openrouter_in_stream_error_after_text_is_reported_as_started(
    session: aiohttp.ClientSession,
    fake_openrouter: FakeChatCompletions,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_openrouter.script(
        ChunkStream().comment().text("Half").error("Provider disconnected unexpectedly").reply()
    )
    events = await read_all(openai(session, fake_openrouter, http).stream(request()))
    assert events[0] == StreamTextDelta("Half")
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.kind == "server_error"
    assert failed.error.started
    assert failed.error.retryable
    assert failed.error.message == "OpenRouter failed mid-reply: Provider disconnected unexpectedly"
    assert sleeps.delays == []


async def test_openrouter_in_stream_rate_limit_before_content_is_retried(
    session: aiohttp.ClientSession,
    fake_openrouter: FakeChatCompletions,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_openrouter.script(
        ChunkStream().comment().error("Rate limit exceeded upstream", code=429).reply(),
        ChunkStream().text("Fine.").finish().done().reply(),
    )
    events = await read_all(openai(session, fake_openrouter, http).stream(request()))
    assert events[0] == StreamTextDelta("Fine.")
    assert len(sleeps.delays) == 1
    assert len(fake_openrouter.requests) == 2


async def test_openrouter_error_bodies(
    session: aiohttp.ClientSession, fake_openrouter: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openrouter.script(openai_error(402, "Insufficient credits", flavour="openrouter"))
    [failed] = await read_all(openai(session, fake_openrouter, http).stream(request()))
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.retryable) == ("quota", False)
    assert (
        failed.error.message
        == "OpenRouter says the account is out of credits (402): Insufficient credits"
    )


async def test_ollama_whole_calls_with_reused_or_missing_indexes_and_a_bare_origin(
    session: aiohttp.ClientSession, fake_ollama: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_ollama.script(
        ChunkStream(model="llama3.2")
        .tool_call("call_1", "read_page", {"selector": "h1"}, index=0, whole=True)
        .tool_call("call_2", "read_page", {"selector": "h2"}, index=0, whole=True)
        .tool_call("call_3", "read_page", {"selector": "h3"}, index=None, whole=True)
        .finish("stop")
        .usage(50, 9)
        .done()
        .reply()
    )
    adapter = OpenAIProvider(
        session, flavour="custom", api_key=None, base_url=fake_ollama.origin, http=http
    )
    events = await read_all(adapter.stream(request()))

    finished = [e for e in events if isinstance(e, StreamToolCallFinished)]
    assert [(e.id, e.arguments["selector"]) for e in finished] == [
        ("call_1", "h1"),
        ("call_2", "h2"),
        ("call_3", "h3"),
    ]
    assert events[-1] == Finished("tool_use", "stop")
    sent = fake_ollama.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert "authorization" not in sent.headers


async def test_fragments_without_ids_follow_their_index_and_calls_without_ids_get_one(
    session: aiohttp.ClientSession, fake_ollama: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_ollama.script(
        ChunkStream()
        .tool_call(None, "read_page", {"selector": "p"}, index=0)
        .finish("tool_calls")
        .done()
        .reply()
    )
    stream = openai(session, fake_ollama, http).stream(request())
    events = await read_all(stream)
    [finished] = [e for e in events if isinstance(e, StreamToolCallFinished)]
    assert finished.arguments == {"selector": "p"}
    assert finished.id.startswith("call_")


async def test_a_finish_reason_without_done_is_enough_but_silence_is_not(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(
        ChunkStream().text("Complete").finish().reply(),
        ChunkStream().text("Incomplete").reply(),
    )
    adapter = openai(session, fake_openai, http)
    complete = await read_all(adapter.stream(request()))
    incomplete = await read_all(adapter.stream(request()))
    assert complete[-1] == Finished("end_turn", "stop")
    failed = incomplete[-1]
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.started) == ("network", True)


@pytest.mark.parametrize(
    "body",
    [b"data: {not json\n\n", b"data: [1, 2]\n\n", b'data: {"choices": [{"delta": 5}]}\n\n'],
)
async def test_a_malformed_stream_is_reported_not_raised(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions, body: bytes
) -> None:
    fake_openai.script(StreamReply(body))
    [failed] = await read_all(openai(session, fake_openai, http).stream(request()))
    assert isinstance(failed, Failed)
    assert failed.error.kind == "malformed_stream"


async def test_a_json_answer_instead_of_a_stream(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(ErrorReply(200, {"object": "chat.completion", "choices": []}))
    [failed] = await read_all(openai(session, fake_openai, http).stream(request()))
    assert isinstance(failed, Failed)
    assert failed.error.kind == "malformed_stream"


async def test_vllm_and_ollama_error_shapes(
    session: aiohttp.ClientSession, fake_ollama: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_ollama.script(
        ErrorReply(404, {"error": 'model "llama9" not found, try pulling it first'}),
        ErrorReply(
            400, {"object": "error", "message": "maximum context length exceeded", "code": 400}
        ),
    )
    adapter = openai(session, fake_ollama, http)
    [missing] = await read_all(adapter.stream(request()))
    [too_long] = await read_all(adapter.stream(request()))
    assert isinstance(missing, Failed)
    assert isinstance(too_long, Failed)
    assert missing.error.kind == "not_found"
    assert "try pulling it first" in missing.error.message
    assert too_long.error.message.endswith("(400): maximum context length exceeded")


def test_the_endpoint_follows_the_sdk_base_url_convention() -> None:
    assert (
        chat_completions_url("https://api.openai.com/v1")
        == "https://api.openai.com/v1/chat/completions"
    )
    assert (
        chat_completions_url("https://openrouter.ai/api/v1/")
        == "https://openrouter.ai/api/v1/chat/completions"
    )
    assert (
        chat_completions_url("http://localhost:11434")
        == "http://localhost:11434/v1/chat/completions"
    )
    assert (
        chat_completions_url("http://localhost:11434/")
        == "http://localhost:11434/v1/chat/completions"
    )


async def test_a_custom_provider_needs_a_base_url(session: aiohttp.ClientSession) -> None:
    with pytest.raises(ValueError, match="base_url"):
        OpenAIProvider(session, flavour="custom", api_key=None)


async def test_usage_of_the_wrong_type_is_a_malformed_stream(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    chunk = b'data: {"choices": [], "usage": {"prompt_tokens": "many"}}\n\n'
    fake_openai.script(StreamReply(chunk))
    [failed] = await read_all(openai(session, fake_openai, http).stream(request()))
    assert isinstance(failed, Failed)
    assert failed.error.kind == "malformed_stream"


async def test_cached_and_reasoning_tokens_are_read_from_the_usage_details(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(
        ChunkStream()
        .role()
        .text("Thought it through.")
        .finish("stop")
        .usage(2000, 300, cached=1500, reasoning=250)
        .done()
        .reply()
    )
    events = await read_all(openai(session, fake_openai, http).stream(request()))
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage == Usage(
        input_tokens=2000, output_tokens=300, cache_read_tokens=1500, reasoning_tokens=250
    )


async def test_a_token_count_past_any_model_is_held_to_the_most_one_request_counts(
    session: aiohttp.ClientSession, fake_openai: FakeChatCompletions, http: HttpOptions
) -> None:
    fake_openai.script(
        ChunkStream().role().text("Hi.").finish("stop").usage(3_000_000_000, -5).done().reply()
    )
    events = await read_all(openai(session, fake_openai, http).stream(request()))
    usage = next(e for e in events if isinstance(e, Usage))
    assert (usage.input_tokens, usage.output_tokens) == (MAX_REPORTED_TOKENS, 0)
