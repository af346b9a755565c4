"""``providers-v1``: a team's model providers. No answer ever carries a key."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.common.protocol.ids import ProviderId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.services.providers import (
    MAX_BASE_URL_LENGTH,
    MAX_KEY_LENGTH,
    MAX_MODEL_LENGTH,
    MAX_MODELS,
    MAX_NAME_LENGTH,
    ProviderStatus,
)

routes = HostRouteTable("providers-v1")

Key = Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEY_LENGTH)]
BaseUrl = Annotated[str, StringConstraints(min_length=1, max_length=MAX_BASE_URL_LENGTH)]
Model = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MODEL_LENGTH)]
Models = Annotated[list[Model], Field(max_length=MAX_MODELS)]


class ProviderView(WireModel):
    id: str
    kind: str = Field(description="'anthropic', 'openai', 'openrouter' or 'custom'")
    name: str
    base_url: str
    models: list[str]
    default_model: str | None
    key_set: bool
    usable: bool
    unusable_reason: str | None
    last_error: str | None
    verified: bool = Field(
        description="It answered a request (a test or a turn) with its current key and "
        "address; false after a failure, a new key or a new address."
    )


class ProviderList(WireModel):
    providers: list[ProviderView]


class ProviderDeleted(WireModel):
    deleted: bool


class ProviderRef(InboundModel):
    provider: ProviderId


class ProviderCheckView(WireModel):
    ok: bool
    outcome: str = Field(description="ok, refused, unreachable or noKey")
    message: str = Field(description="What the provider answered, in words; never the key.")


class SetProviderKey(InboundModel):
    provider: ProviderId
    key: Key


class CreateCustomProvider(InboundModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_LENGTH)]
    base_url: BaseUrl
    models: Models = Field(default_factory=list)
    default_model: Model | None = None
    key: Key | None = None


class UpdateProvider(InboundModel):
    """Only the fields given change; null puts a built-in provider's own value back."""

    provider: ProviderId
    base_url: BaseUrl | None = None
    default_model: Model | None = None
    models: Models | None = None


def _view(status: ProviderStatus) -> ProviderView:
    return ProviderView(
        id=status.id,
        kind=status.kind,
        name=status.name,
        base_url=status.base_url,
        models=list(status.models),
        default_model=status.default_model,
        key_set=status.key_set,
        usable=status.usable,
        unusable_reason=status.unusable_reason,
        last_error=status.last_error,
        verified=status.verified,
    )


@routes.route("providers-v1/list", args=NoArgs, least_role=Role.MEMBER)
async def list_providers(call: HostCall, _args: NoArgs) -> ProviderList:
    """The team's providers: whether each has a usable key, never the key."""
    listed = await call.host.providers.list_providers(call.peer.team_id)
    return ProviderList(providers=[_view(status) for status in listed])


@routes.route("providers-v1/set_key", args=SetProviderKey, least_role=Role.ADMIN)
async def set_key(call: HostCall, args: SetProviderKey) -> ProviderView:
    """Set a provider's key (sealed before it is stored)."""
    return _view(await call.host.providers.set_key(call.peer.team_id, args.provider, args.key))


@routes.route("providers-v1/clear_key", args=ProviderRef, least_role=Role.ADMIN)
async def clear_key(call: HostCall, args: ProviderRef) -> ProviderView:
    """Forget a provider's key."""
    return _view(await call.host.providers.clear_key(call.peer.team_id, args.provider))


@routes.route("providers-v1/create_custom", args=CreateCustomProvider, least_role=Role.ADMIN)
async def create_custom(call: HostCall, args: CreateCustomProvider) -> ProviderView:
    """Add an OpenAI-compatible provider (Ollama, vLLM, LM Studio, a gateway)."""
    status = await call.host.providers.create_custom(
        call.peer.team_id,
        args.name,
        args.base_url,
        models=args.models,
        default_model=args.default_model,
        key=args.key,
    )
    return _view(status)


@routes.route("providers-v1/update", args=UpdateProvider, least_role=Role.ADMIN)
async def update_provider(call: HostCall, args: UpdateProvider) -> ProviderView:
    """Change a provider's base URL, default model or models."""
    changes: dict[str, Any] = {
        name: getattr(args, name) for name in args.model_fields_set - {"provider"}
    }
    status = await call.host.providers.update_provider(call.peer.team_id, args.provider, **changes)
    return _view(status)


@routes.route("providers-v1/delete_custom", args=ProviderRef, least_role=Role.ADMIN)
async def delete_custom(call: HostCall, args: ProviderRef) -> ProviderDeleted:
    """Delete a custom provider and its key."""
    await call.host.providers.delete_custom(call.peer.team_id, args.provider)
    return ProviderDeleted(deleted=True)


@routes.route("providers-v1/test", args=ProviderRef, least_role=Role.ADMIN)
async def test_provider(call: HostCall, args: ProviderRef) -> ProviderCheckView:
    """Ask the provider for its model list once: whether it answers with its key. The
    answer is kept as the provider's status, as a turn's failure is."""
    team_id = call.peer.team_id
    await call.host.providers.require_provider(team_id, args.provider)
    checked = await call.host.models.check(team_id, args.provider)
    await call.host.providers.record_error(team_id, args.provider, checked.error)
    return ProviderCheckView(
        ok=checked.outcome == "ok", outcome=checked.outcome, message=checked.message
    )
