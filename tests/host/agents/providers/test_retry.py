"""Retries: 429, 529 and overloaded_error, with retry-after honoured and every wait bounded."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import aiohttp
import pytest

from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.errors import ProviderError
from server.host.agents.providers.events import Failed, Finished, StreamTextDelta
from server.host.agents.providers.openai import OpenAIProvider
from server.host.agents.providers.retry import RetryPolicy, retry_after_seconds
from server.host.agents.providers.stream import HttpOptions, ModelRequest
from server.host.agents.providers.transcript import UserMessage
from tests.host.agents.providers.helpers import RecordedSleep, read_all
from tests.support.clock import FakeClock
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents, anthropic_error
from tests.support.fakes.openai import API_KEY as OPENAI_KEY
from tests.support.fakes.openai import ChunkStream, FakeChatCompletions, openai_error

REQUEST = ModelRequest(model="m", messages=[UserMessage(text="Hi")])


def anthropic(
    session: aiohttp.ClientSession, fake: FakeAnthropic, http: HttpOptions
) -> AnthropicProvider:
    return AnthropicProvider(session, api_key=API_KEY, base_url=fake.base_url, http=http)


def ok() -> MessageEvents:
    return MessageEvents().text("Fine.").stop()


async def test_429_waits_as_long_as_retry_after_says(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_anthropic.script(
        anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "7"}), ok().reply()
    )
    events = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert events[0] == StreamTextDelta("Fine.")
    assert sleeps.delays == [7.0]
    assert len(fake_anthropic.requests) == 2


async def test_retry_after_as_an_http_date(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
    clock: FakeClock,
) -> None:
    when = format_datetime(datetime.fromtimestamp(int(clock.now()) + 12, UTC), usegmt=True)
    fake_anthropic.script(
        anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": when}), ok().reply()
    )
    await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    [delay] = sleeps.delays
    assert 11 <= delay <= 12


async def test_529_backs_off_exponentially_with_jitter(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    overloaded = anthropic_error(529, "overloaded_error", "Overloaded")
    fake_anthropic.script(overloaded, overloaded, overloaded, ok().reply())
    events = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert events[-1] == Finished("end_turn", "end_turn")
    assert len(sleeps.delays) == 3
    for attempt, delay in enumerate(sleeps.delays):
        assert 2**attempt * 0.5 <= delay <= 2**attempt


async def test_attempts_are_bounded(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_anthropic.script(*[anthropic_error(529, "overloaded_error", "Overloaded")] * 5)
    [failed] = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.status) == ("overloaded", 529)
    assert failed.error.message == "Anthropic is overloaded (529): Overloaded"
    assert len(fake_anthropic.requests) == 4
    assert len(sleeps.delays) == 3
    assert fake_anthropic.unplayed == 1


async def test_a_wait_longer_than_the_cap_is_reported_not_waited(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_anthropic.script(
        anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "120"})
    )
    [failed] = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.retry_after) == ("rate_limited", 120.0)
    assert sleeps.delays == []


async def test_the_total_wait_is_capped(
    session: aiohttp.ClientSession, fake_anthropic: FakeAnthropic, sleeps: RecordedSleep
) -> None:
    limited = anthropic_error(429, "rate_limit_error", "slow down", {"retry-after": "20"})
    fake_anthropic.script(limited, limited, limited, limited)
    http = HttpOptions(sleep=sleeps, retry=RetryPolicy(max_attempts=10, max_total_wait=45))
    [failed] = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert isinstance(failed, Failed)
    assert sleeps.delays == [20.0, 20.0]


async def test_a_spend_limit_is_not_retried(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    from tests.support.fakes.server import ErrorReply

    body = {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "You have reached your spend limit.",
            "details": {"error_code": "enforced_spend_limit_reached"},
        },
    }
    fake_anthropic.script(ErrorReply(429, body))
    [failed] = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert isinstance(failed, Failed)
    assert (failed.error.kind, failed.error.retryable) == ("quota", False)
    assert sleeps.delays == []


async def test_overloaded_mid_stream_before_any_content_is_retried(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_anthropic.script(MessageEvents().ping().error().reply(chunk_size=11), ok().reply())
    events = await read_all(anthropic(session, fake_anthropic, http).stream(REQUEST))
    assert events[0] == StreamTextDelta("Fine.")
    assert len(sleeps.delays) == 1


async def test_overloaded_after_deltas_is_retryable_but_started(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_anthropic.script(MessageEvents().text("Part").error().reply(chunk_size=11), ok().reply())
    stream = anthropic(session, fake_anthropic, http).stream(REQUEST)
    events = await read_all(stream)
    assert events[0] == StreamTextDelta("Part")
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.kind == "overloaded"
    assert failed.error.retryable
    assert failed.error.started
    assert failed.error.message == "Anthropic failed mid-reply: Overloaded"
    assert stream.reply.error is failed.error
    assert sleeps.delays == []
    assert len(fake_anthropic.requests) == 1


async def test_openai_429_with_retry_after_ms(
    session: aiohttp.ClientSession,
    fake_openai: FakeChatCompletions,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_openai.script(
        openai_error(
            429,
            "Rate limit reached",
            code="rate_limit_exceeded",
            headers={"retry-after-ms": "1500"},
        ),
        ChunkStream().text("Fine.").finish().done().reply(),
    )
    adapter = OpenAIProvider(session, api_key=OPENAI_KEY, base_url=fake_openai.base_url, http=http)
    events = await read_all(adapter.stream(REQUEST))
    assert events[0] == StreamTextDelta("Fine.")
    assert sleeps.delays == [1.5]


async def test_openai_insufficient_quota_is_not_retried(
    session: aiohttp.ClientSession,
    fake_openai: FakeChatCompletions,
    http: HttpOptions,
    sleeps: RecordedSleep,
) -> None:
    fake_openai.script(
        openai_error(
            429,
            "You exceeded your current quota",
            error_type="insufficient_quota",
            code="insufficient_quota",
        )
    )
    adapter = OpenAIProvider(session, api_key=OPENAI_KEY, base_url=fake_openai.base_url, http=http)
    [failed] = await read_all(adapter.stream(REQUEST))
    assert isinstance(failed, Failed)
    assert failed.error.kind == "quota"
    assert sleeps.delays == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC).timestamp()
    assert retry_after_seconds(headers, now) == expected


def test_the_policy_retries_only_its_kinds() -> None:
    policy = RetryPolicy()
    rng = random.Random(1)
    assert policy.delay_before_retry(ProviderError("network", "x"), 1, 0, rng) is None
    assert policy.delay_before_retry(ProviderError("authentication", "x"), 1, 0, rng) is None
    assert policy.delay_before_retry(ProviderError("overloaded", "x"), 1, 0, rng) is not None
    assert policy.delay_before_retry(ProviderError("overloaded", "x"), 4, 0, rng) is None
    networked = RetryPolicy(retry_kinds=frozenset({"network"}))
    assert networked.delay_before_retry(ProviderError("network", "x"), 1, 0, rng) is not None
