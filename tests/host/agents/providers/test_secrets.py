"""No API key, request body or reply text reaches the logs or an error message."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.events import Failed
from server.host.agents.providers.openai import OpenAIProvider
from server.host.agents.providers.stream import HttpOptions, ModelRequest
from server.host.agents.providers.transcript import UserMessage
from tests.host.agents.providers.helpers import read_all
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents, anthropic_error
from tests.support.fakes.openai import API_KEY as OPENAI_KEY
from tests.support.fakes.openai import ChunkStream, FakeChatCompletions

SECRET_WORDS = "the member's private words"
SECRET_SYSTEM = "the system prompt's private rules"
SECRET_REPLY = "the model's private answer"
REQUEST = ModelRequest(model="m", messages=[UserMessage(text=SECRET_WORDS)], system=SECRET_SYSTEM)


async def test_nothing_secret_is_logged_by_either_adapter(
    session: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeChatCompletions,
    http: HttpOptions,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_anthropic.script(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        MessageEvents().text(SECRET_REPLY).stop().reply(),
    )
    fake_openai.script(ChunkStream().text(SECRET_REPLY).finish().done().reply())
    claude = AnthropicProvider(
        session, api_key=API_KEY, base_url=fake_anthropic.base_url, http=http
    )
    gpt = OpenAIProvider(session, api_key=OPENAI_KEY, base_url=fake_openai.base_url, http=http)
    wrong_claude = AnthropicProvider(
        session, api_key=API_KEY + "x", base_url=fake_anthropic.base_url, http=http
    )
    wrong_gpt = OpenAIProvider(
        session, api_key=OPENAI_KEY + "x", base_url=fake_openai.base_url, http=http
    )

    outcomes = [
        *await read_all(claude.stream(REQUEST)),
        *await read_all(gpt.stream(REQUEST)),
        *await read_all(wrong_claude.stream(REQUEST)),
        *await read_all(wrong_gpt.stream(REQUEST)),
    ]

    failures = [event.error for event in outcomes if isinstance(event, Failed)]
    assert [error.kind for error in failures] == ["authentication", "authentication"]
    assert "model request: Anthropic model=m attempt=2" in caplog.text
    for record in caplog.records:
        text = record.getMessage()
        for secret in (API_KEY, OPENAI_KEY, SECRET_WORDS, SECRET_SYSTEM, SECRET_REPLY):
            assert secret not in text
    for error in failures:
        for secret in (API_KEY, OPENAI_KEY):
            assert secret not in error.message
            assert secret not in repr(error)
    for adapter in (claude, gpt):
        assert API_KEY not in repr(vars(adapter))
        assert OPENAI_KEY not in repr(vars(adapter))
