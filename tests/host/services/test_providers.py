"""ProviderService on both databases: keys sealed, limits, built-in defaults and overrides."""

from __future__ import annotations

from collections.abc import Awaitable

import pytest

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.errors import CrewhostError
from server.common.protocol.events import HostEvent, ProvidersChanged
from server.db.engine import Database
from server.host.services.providers import MAX_CUSTOM_PROVIDERS, ProviderService, ProviderStatus
from server.host.storage.providers import ProviderRepository
from tests.support.clock import FakeClock

TEAM_A, TEAM_B = "a" * 32, "b" * 32


class Announced(list[tuple[str, HostEvent]]):
    def __call__(self, team_id: str, event: HostEvent) -> None:
        self.append((team_id, event))


@pytest.fixture
def announced() -> Announced:
    return Announced()


@pytest.fixture
def service(db: Database, clock: FakeClock, announced: Announced) -> ProviderService:
    return ProviderService(db, clock, SecretBox(KeyRing.generate()), announced)


def by_id(listed: list[ProviderStatus]) -> dict[str, ProviderStatus]:
    return {p.id: p for p in listed}


async def refused(code: str, call: Awaitable[object]) -> CrewhostError:
    with pytest.raises(CrewhostError) as caught:
        await call
    assert caught.value.code == code, caught.value.message
    return caught.value


async def test_every_team_has_the_built_in_providers_with_their_defaults(
    service: ProviderService,
) -> None:
    listed = await service.list_providers(TEAM_A)
    assert [(p.id, p.kind, p.name, p.base_url, p.default_model) for p in listed] == [
        (
            "anthropic",
            "anthropic",
            "Anthropic",
            "https://api.anthropic.com/v1",
            "claude-sonnet-4-5",
        ),
        ("openai", "openai", "OpenAI", "https://api.openai.com/v1", "gpt-4.1"),
        (
            "openrouter",
            "openrouter",
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            "anthropic/claude-sonnet-4-5",
        ),
    ]
    assert all(not p.key_set and not p.usable for p in listed)
    assert {p.unusable_reason for p in listed} == {"no key is set"}
    credentials = await service.credentials(TEAM_A, "anthropic")
    assert (credentials.wire, credentials.api_key) == ("anthropic", None)


async def test_a_key_is_sealed_to_its_row_and_opens_only_through_credentials(
    service: ProviderService, db: Database, announced: Announced
) -> None:
    shown = await service.set_key(TEAM_A, "openai", "  sk-openai-secret\n")
    assert (shown.key_set, shown.usable, shown.unusable_reason) == (True, True, None)
    assert "sk-openai-secret" not in repr(shown)
    assert announced == [(TEAM_A, ProvidersChanged())]
    async with db.read() as conn:
        stored = await ProviderRepository().get_provider(conn, TEAM_A, "openai")
    assert stored is not None
    assert stored.api_key is not None
    assert b"sk-openai-secret" not in stored.api_key
    credentials = await service.credentials(TEAM_A, "openai")
    assert (credentials.api_key, credentials.wire) == ("sk-openai-secret", "openai")
    assert "sk-openai-secret" not in repr(credentials)

    cleared = await service.clear_key(TEAM_A, "openai")
    assert (cleared.key_set, cleared.usable) == (False, False)
    assert (await service.credentials(TEAM_A, "openai")).api_key is None


async def test_keys_refused(service: ProviderService) -> None:
    await refused("providerNotFound", service.set_key(TEAM_A, "mistral", "k"))
    await refused("providerNotFound", service.clear_key(TEAM_A, "custom-" + "0" * 32))
    for bad in ("", "   ", "two words", "line\nbreak", "x" * 4097):
        await refused("invalidArgument", service.set_key(TEAM_A, "anthropic", bad))
    assert (await service.set_key(TEAM_A, "anthropic", "x" * 4096)).usable


async def test_a_key_this_host_cannot_open_is_unusable_never_a_crash(
    service: ProviderService, db: Database, clock: FakeClock, announced: Announced
) -> None:
    await service.set_key(TEAM_A, "anthropic", "sk-ant-1")
    await service.create_custom(TEAM_A, "Local", "http://127.0.0.1:11434/v1", models=["llama3"])
    # The same rows on a machine whose ring lacks the key (data copied without the ring).
    elsewhere = ProviderService(db, clock, SecretBox(KeyRing.generate()), announced)
    listed = by_id(await elsewhere.list_providers(TEAM_A))
    anthropic = listed["anthropic"]
    assert (anthropic.key_set, anthropic.usable) == (True, False)
    assert anthropic.unusable_reason is not None
    assert "cannot be decrypted on this host" in anthropic.unusable_reason
    assert "not in this host's key ring" in anthropic.unusable_reason
    local = next(p for p in listed.values() if p.kind == "custom")
    assert local.usable, "a custom provider without a key needs none"
    error = await refused("providerKeyUnusable", elsewhere.credentials(TEAM_A, "anthropic"))
    assert "sk-ant" not in error.message
    # Setting it again on this machine makes it usable here.
    assert (await elsewhere.set_key(TEAM_A, "anthropic", "sk-ant-2")).usable


async def test_a_key_copied_to_another_team_or_provider_does_not_open(
    service: ProviderService, db: Database
) -> None:
    await service.set_key(TEAM_A, "openai", "sk-a")
    await service.set_key(TEAM_B, "openai", "sk-b")
    await service.set_key(TEAM_B, "openrouter", "sk-b-or")
    repo = ProviderRepository()
    async with db.write() as conn:
        mine = await repo.get_provider(conn, TEAM_A, "openai")
        assert mine is not None
        await repo.update_provider(conn, TEAM_B, "openai", api_key=mine.api_key)
        await repo.update_provider(conn, TEAM_B, "openrouter", api_key=mine.api_key)
    listed = by_id(await service.list_providers(TEAM_B))
    for provider_id in ("openai", "openrouter"):
        assert not listed[provider_id].usable
        reason = listed[provider_id].unusable_reason or ""
        assert "moved from another row" in reason
    assert (await service.credentials(TEAM_A, "openai")).api_key == "sk-a"


async def test_custom_providers_names_limits_and_defaults(service: ProviderService) -> None:
    made = await service.create_custom(
        TEAM_A, "  Ollama  ", "http://127.0.0.1:11434/v1/", models=["llama3", "qwen", "llama3"]
    )
    assert made.id.startswith("custom-")
    assert (made.name, made.base_url, made.models) == (
        "Ollama",
        "http://127.0.0.1:11434/v1",
        ("llama3", "qwen"),
    )
    assert (made.default_model, made.key_set, made.usable) == ("llama3", False, True)
    bare = await service.create_custom(TEAM_A, "Bare", "https://gw.example.com")
    assert (bare.usable, bare.unusable_reason) == (False, "no default model")
    for name in ("ollama", "OpenAI", "anthropic"):
        await refused("providerNameTaken", service.create_custom(TEAM_A, name, "http://x.test"))
    # Another team may use the same name.
    await service.create_custom(TEAM_B, "Ollama", "http://x.test", models=["m"])
    for n in range(MAX_CUSTOM_PROVIDERS - 2):
        await service.create_custom(TEAM_A, f"P{n}", "http://x.test")
    await refused("providerLimit", service.create_custom(TEAM_A, "One more", "http://x.test"))
    listed = await service.list_providers(TEAM_A)
    assert len(listed) == 3 + MAX_CUSTOM_PROVIDERS
    assert [p.name for p in listed[3:5]] == ["Ollama", "Bare"]


async def test_updates_override_and_reset_the_built_in_values(service: ProviderService) -> None:
    updated = await service.update_provider(
        TEAM_A, "anthropic", base_url="http://127.0.0.1:9999/v1", default_model="claude-x"
    )
    assert (updated.base_url, updated.default_model) == ("http://127.0.0.1:9999/v1", "claude-x")
    credentials = await service.credentials(TEAM_A, "anthropic")
    assert (credentials.base_url, credentials.default_model) == (updated.base_url, "claude-x")
    models = await service.update_provider(TEAM_A, "anthropic", models=["a", "b"])
    assert (models.base_url, models.models) == ("http://127.0.0.1:9999/v1", ("a", "b"))
    reset = await service.update_provider(TEAM_A, "anthropic", base_url=None, default_model=None)
    assert (reset.base_url, reset.default_model) == (
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
    )
    assert by_id(await service.list_providers(TEAM_B))["anthropic"].models == ()

    custom = await service.create_custom(TEAM_A, "Gateway", "http://gw.test", models=["m"])
    await refused("invalidArgument", service.update_provider(TEAM_A, custom.id, base_url=None))
    moved = await service.update_provider(TEAM_A, custom.id, base_url="https://gw2.test/v1")
    assert moved.base_url == "https://gw2.test/v1"
    await refused("providerNotFound", service.update_provider(TEAM_B, custom.id, models=[]))


async def test_delete_and_errors(service: ProviderService, announced: Announced) -> None:
    custom = await service.create_custom(
        TEAM_A, "Gateway", "http://gw.test", models=["m"], key="gw-key"
    )
    await refused("providerBuiltIn", service.delete_custom(TEAM_A, "openai"))
    await refused("providerNotFound", service.delete_custom(TEAM_B, custom.id))
    assert not by_id(await service.list_providers(TEAM_A))[custom.id].verified
    await service.record_error(TEAM_A, custom.id, None)
    assert by_id(await service.list_providers(TEAM_A))[custom.id].verified
    events_before = len(announced)
    await service.record_error(TEAM_A, custom.id, None)  # no change, no event
    assert len(announced) == events_before
    await service.record_error(TEAM_A, custom.id, "401 Unauthorized")
    failing = by_id(await service.list_providers(TEAM_A))[custom.id]
    assert (failing.last_error, failing.verified) == ("401 Unauthorized", False)
    events_before = len(announced)
    await service.record_error(TEAM_A, custom.id, "401 Unauthorized")  # no change, no event
    assert len(announced) == events_before
    await service.record_error(TEAM_A, custom.id, None)
    # A new key has answered nothing yet: neither failing nor verified.
    await service.set_key(TEAM_A, custom.id, "gw-key-2")
    rekeyed = by_id(await service.list_providers(TEAM_A))[custom.id]
    assert (rekeyed.last_error, rekeyed.verified) == (None, False)
    assert len(announced) == events_before + 2
    await service.record_error(TEAM_A, custom.id, None)
    # Nor has a new address.
    await service.update_provider(TEAM_A, custom.id, base_url="http://gw2.test")
    assert not by_id(await service.list_providers(TEAM_A))[custom.id].verified
    # A model changes nothing of it.
    await service.record_error(TEAM_A, custom.id, None)
    await service.update_provider(TEAM_A, custom.id, models=["m2"])
    assert by_id(await service.list_providers(TEAM_A))[custom.id].verified
    await service.delete_custom(TEAM_A, custom.id)
    await refused("providerNotFound", service.credentials(TEAM_A, custom.id))
    assert {team for team, _ in announced} == {TEAM_A}


async def test_a_provider_moved_to_another_origin_forgets_its_key(
    service: ProviderService,
) -> None:
    await service.set_key(TEAM_A, "openai", "sk-owner-0123456789")
    # Another path at the same origin keeps it.
    same = await service.update_provider(TEAM_A, "openai", base_url="https://API.openai.com:443/v2")
    assert same.key_set
    assert (await service.credentials(TEAM_A, "openai")).api_key == "sk-owner-0123456789"
    # Another host does not get it: the address changes, the key is gone.
    moved = await service.update_provider(TEAM_A, "openai", base_url="http://127.0.0.1:9/v1")
    assert (moved.base_url, moved.key_set, moved.usable) == ("http://127.0.0.1:9/v1", False, False)
    assert (await service.credentials(TEAM_A, "openai")).api_key is None
    # A key set for the new address stays; going back to the provider's own address keeps it.
    await service.set_key(TEAM_A, "openai", "sk-local-0123456789")
    assert (await service.update_provider(TEAM_A, "openai", base_url=None)).key_set
    back = await service.update_provider(TEAM_A, "openai", base_url="https://api.openai.com/v1")
    assert back.key_set
    # Another port is another origin, for a custom provider too.
    custom = await service.create_custom(TEAM_A, "Gateway", "http://gw.test", key="gw-key")
    port = await service.update_provider(TEAM_A, custom.id, base_url="http://gw.test:8080")
    assert not port.key_set
    # A change of model keeps the key.
    await service.set_key(TEAM_A, custom.id, "gw-key")
    assert (await service.update_provider(TEAM_A, custom.id, models=["m"])).key_set
