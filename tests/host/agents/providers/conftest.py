"""Adapters against local fake providers, with waits recorded rather than slept."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import aiohttp
import pytest

from server.host.agents.providers.stream import HttpOptions
from tests.host.agents.providers.helpers import RecordedSleep
from tests.support.clock import FakeClock
from tests.support.fakes.anthropic import FakeAnthropic
from tests.support.fakes.openai import FakeChatCompletions


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture
def sleeps() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
def http(sleeps: RecordedSleep, clock: FakeClock) -> HttpOptions:
    return HttpOptions(
        connect_timeout=5, read_timeout=5, sleep=sleeps, clock=clock, rng=random.Random(7)
    )


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeChatCompletions]:
    async with FakeChatCompletions() as fake:
        yield fake


@pytest.fixture
async def fake_openrouter() -> AsyncIterator[FakeChatCompletions]:
    async with FakeChatCompletions(flavour="openrouter") as fake:
        yield fake


@pytest.fixture
async def fake_ollama() -> AsyncIterator[FakeChatCompletions]:
    async with FakeChatCompletions(flavour="ollama") as fake:
        yield fake
