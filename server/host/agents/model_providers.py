"""From a team's provider settings to an adapter that streams replies.

The key comes from the provider service at the start of each turn, so a key that
changes or goes between turns takes effect at once. One HTTP session serves every
request of the host; it is a long-lived resource of the host's services.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Protocol

import aiohttp

from server.common.errors import Conflict
from server.common.public_addresses import PublicOnlyPolicy
from server.host.agents.providers.anthropic import AnthropicProvider, AnthropicWire
from server.host.agents.providers.check import ProviderCheck, check_provider
from server.host.agents.providers.openai import ChatCompletionsWire, OpenAIProvider
from server.host.agents.providers.stream import HttpOptions, ModelProvider
from server.host.web.dial_policy import policy_session


class Credentials(Protocol):
    """What the provider service tells of one provider (``ProviderCredentials``)."""

    @property
    def provider_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def wire(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def default_model(self) -> str | None: ...


LoadCredentials = Callable[[str, str], Awaitable[Credentials]]


class ModelProviders:
    """Makes the adapter for a team's provider; an async context manager over its session."""

    def __init__(
        self,
        credentials: LoadCredentials,
        http: HttpOptions | None = None,
        *,
        address_policy: PublicOnlyPolicy | None = None,
    ) -> None:
        self._credentials = credentials
        self._http = http
        # Judges every name a provider's address dials (None: not judged).
        self._policy = address_policy
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ModelProviders:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def resolve(self, team_id: str, provider_id: str) -> tuple[ModelProvider, str]:
        """The adapter and the default model of ``provider_id``; refused with a clear
        reason when it has no usable key or no model."""
        found = await self._credentials(team_id, provider_id)
        if found.default_model is None:
            raise Conflict(
                f"the provider {provider_id} has no default model; give the agent one",
                code="providerNoModel",
            )
        if self._session is None:
            self._session = policy_session(self._policy)
        provider: ModelProvider
        if found.wire == "anthropic":
            provider = AnthropicProvider(
                self._session, api_key=found.api_key, base_url=found.base_url, http=self._http
            )
        else:
            flavour = found.kind if found.kind in ("openai", "openrouter") else "custom"
            provider = OpenAIProvider(
                self._session,
                flavour=flavour,  # type: ignore[arg-type]
                api_key=found.api_key,
                base_url=found.base_url,
                # A person knows a custom provider by the name they gave it.
                label=found.name,
                http=self._http,
            )
        return provider, found.default_model

    async def check(self, team_id: str, provider_id: str) -> ProviderCheck:
        """Ask the provider for its model list once, with its key: whether it answers."""
        found = await self._credentials(team_id, provider_id)
        if self._session is None:
            self._session = policy_session(self._policy)
        wire: AnthropicWire | ChatCompletionsWire
        if found.wire == "anthropic":
            wire = AnthropicWire(api_key=found.api_key, base_url=found.base_url)
        else:
            flavour = found.kind if found.kind in ("openai", "openrouter") else "custom"
            wire = ChatCompletionsWire(
                flavour=flavour,  # type: ignore[arg-type]
                api_key=found.api_key,
                base_url=found.base_url,
                label=found.name,
            )
        return await check_provider(self._session, wire)
