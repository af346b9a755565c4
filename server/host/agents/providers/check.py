"""One cheap request that tells whether a provider answers with its key: its model list.

Anthropic: ``GET {base_url}/v1/models`` with its key and version headers; an OpenAI-style
provider: ``GET {base_url}/models``. It answered only when a 2xx answer is the model
list, a JSON object with a ``data`` list, as both APIs send it. The answer is a sentence
for a person: the provider answered, it refused (in its own words, the key never in them)
or it could not be reached.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Literal

import aiohttp

from server.host.agents.providers.anthropic import ANTHROPIC_VERSION, AnthropicWire
from server.host.agents.providers.openai import ChatCompletionsWire, chat_completions_url
from server.host.agents.providers.stream import read_capped

CHECK_SECONDS = 15.0
# How much of the answer is read. A long list (OpenRouter's runs to megabytes) is judged
# by its start: an object whose first member is the ``data`` list.
MAX_CHECK_BODY_BYTES = 64 * 1024
_LIST_START = re.compile(rb'\s*\{\s*"data"\s*:\s*\[')

Outcome = Literal["ok", "refused", "unreachable", "noKey"]


@dataclass(frozen=True)
class ProviderCheck:
    outcome: Outcome
    message: str

    @property
    def error(self) -> str | None:
        """What the provider's status records: None once it answered."""
        return None if self.outcome == "ok" else self.message


def models_url_and_headers(
    wire: AnthropicWire | ChatCompletionsWire,
) -> tuple[str, dict[str, str]]:
    if isinstance(wire, AnthropicWire):
        base = wire.base_url.rstrip("/")
        url = base + "/models" if base.endswith("/v1") else base + "/v1/models"
        headers = {"anthropic-version": ANTHROPIC_VERSION, "accept": "application/json"}
        if wire.api_key:
            headers["x-api-key"] = wire.api_key
        return url, headers
    url = chat_completions_url(wire.base_url).removesuffix("/chat/completions") + "/models"
    headers = {"accept": "application/json"}
    if wire.api_key:
        headers["authorization"] = f"Bearer {wire.api_key}"
    return url, headers


async def check_provider(
    session: aiohttp.ClientSession, wire: AnthropicWire | ChatCompletionsWire
) -> ProviderCheck:
    """Ask the provider for its models once."""
    needs_key = isinstance(wire, AnthropicWire) or wire.flavour != "custom"
    if needs_key and not wire.api_key:
        return ProviderCheck("noKey", f"no API key is set for {wire.label}")
    url, headers = models_url_and_headers(wire)
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            async with session.get(url, headers=headers, allow_redirects=False) as response:
                body = await read_capped(response.content, MAX_CHECK_BODY_BYTES + 1)
                status = response.status
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        reason = "it did not answer in time" if isinstance(exc, TimeoutError) else "no connection"
        return ProviderCheck("unreachable", f"{wire.label} could not be reached ({reason})")
    if 200 <= status < 300:
        if _is_model_list(body):
            return ProviderCheck("ok", f"{wire.label} answered with this key")
        return ProviderCheck(
            "refused",
            f"{wire.label} answered (HTTP {status}) with something other than its model list;"
            " check the base URL",
        )
    error = wire.error_from_body(status, body, None)
    # The provider's error, as a turn's failure reads it.
    if error is not None:
        return ProviderCheck("refused", wire.redact(error.message))
    return ProviderCheck("refused", f"{wire.label} refused the request (HTTP {status})")


def _is_model_list(body: bytes) -> bool:
    """Whether ``body`` is a model list: ``{"data": [...], ...}``, or the start of a long one."""
    if len(body) > MAX_CHECK_BODY_BYTES:
        return _LIST_START.match(body) is not None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and isinstance(document.get("data"), list)
