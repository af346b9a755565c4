"""Model providers of a team, and their keys sealed by the secret box.

Every team has the built-in providers ``anthropic``, ``openai`` and
``openrouter`` (a row appears once a key or a setting changes) and up to
``MAX_CUSTOM_PROVIDERS`` custom OpenAI-compatible ones (Ollama, vLLM, LM Studio,
a company gateway). A key is sealed before it is written, bound to its team and
provider, and leaves this service only through ``credentials``; what the routes
show is whether a key is set and usable, never the key. Every change is
announced to the team with ``providers-changed``.
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.protocol.events import HostEvent, ProvidersChanged
from server.common.protocol.ids import CUSTOM_PROVIDER_PREFIX
from server.common.public_addresses import (
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    SavedAddressRefused,
    system_resolve,
)
from server.db.engine import Database
from server.db.tables import PROVIDER_API_KEY
from server.host.storage.agents import AgentRepository
from server.host.storage.providers import ProviderRepository, ProviderRow
from server.host.web.dial_policy import judge_saved_url

log = logging.getLogger(__name__)

MAX_CUSTOM_PROVIDERS = 50
MAX_MODELS = 200
MAX_KEY_LENGTH = 4096
MAX_NAME_LENGTH = 60
MAX_BASE_URL_LENGTH = 2048
MAX_MODEL_LENGTH = 200
MAX_ERROR_LENGTH = 500
CUSTOM_PREFIX = CUSTOM_PROVIDER_PREFIX

Wire = Literal["anthropic", "openai"]


@dataclass(frozen=True, slots=True)
class BuiltinProvider:
    """A provider every team has. ``base_url`` ends before the endpoint's own path
    (``/messages``, ``/chat/completions``), which the wire adapter adds."""

    id: str
    name: str
    base_url: str
    default_model: str
    wire: Wire


BUILTIN_PROVIDERS: dict[str, BuiltinProvider] = {
    p.id: p
    for p in (
        BuiltinProvider(
            "anthropic",
            "Anthropic",
            "https://api.anthropic.com/v1",
            "claude-sonnet-4-5",
            "anthropic",
        ),
        BuiltinProvider("openai", "OpenAI", "https://api.openai.com/v1", "gpt-4.1", "openai"),
        BuiltinProvider(
            "openrouter",
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            "anthropic/claude-sonnet-4-5",
            "openai",
        ),
    )
}


class Keep(enum.Enum):
    """An ``update_provider`` argument left as it is."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True, slots=True)
class ProviderStatus:
    """What anyone in the team may know of a provider: never its key."""

    id: str
    kind: str
    name: str
    base_url: str
    models: tuple[str, ...]
    default_model: str | None
    key_set: bool
    usable: bool
    unusable_reason: str | None
    last_error: str | None
    # Whether it answered a request (a test or a turn) with its current key and address.
    verified: bool


@dataclass(frozen=True, slots=True)
class ProviderCredentials:
    """What the agent runtime needs to call a provider; the only way a key leaves the service.

    ``wire`` names the adapter (Anthropic Messages, or OpenAI-compatible chat completions).
    """

    provider_id: str
    kind: str
    name: str
    wire: Wire
    base_url: str
    api_key: str | None = field(repr=False)
    default_model: str | None


class ProviderAddressRefused(SavedAddressRefused):
    """A provider's or a search engine's address is not public, nor allowed by the host."""

    code = "providerAddressRefused"
    setting = "provider_allowed_hosts"

    def __init__(self, what: str, refused: NonPublicAddress) -> None:
        super().__init__(what, refused, field="baseUrl")


async def judged_base_url(
    url: str, what: str, policy: PublicOnlyPolicy | None, resolver: Resolver
) -> str:
    """``check_base_url``, and the address judged by ``policy`` (None: not judged)."""
    url = check_base_url(url)
    if policy is not None:
        try:
            await judge_saved_url(url, policy, resolver)
        except NonPublicAddress as refused:
            raise ProviderAddressRefused(what, refused) from None
    return url


class ProviderService:
    """List, configure and delete a team's model providers; seal and open their keys.
    ``address_policy`` judges the addresses a team gives them (None: not judged)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        box: SecretBox,
        announce: Callable[[str, HostEvent], None],
        *,
        address_policy: PublicOnlyPolicy | None = None,
        resolver: Resolver = system_resolve,
    ) -> None:
        self._db = db
        self._clock = clock
        self._box = box
        self._announce = announce
        self._policy = address_policy
        self._resolver = resolver
        self._repo = ProviderRepository()

    @property
    def address_policy(self) -> PublicOnlyPolicy | None:
        """What the addresses of the team's providers are judged by (None: not judged)."""
        return self._policy

    async def list_providers(self, team_id: str) -> list[ProviderStatus]:
        """The built-in providers, then the custom ones in the order they were made."""
        async with self._db.read() as conn:
            rows = {row.id: row for row in await self._repo.list_providers(conn, team_id)}
        builtins = [
            self._status(rows.get(p) or self._builtin_row(team_id, p)) for p in BUILTIN_PROVIDERS
        ]
        custom = [self._status(row) for row in rows.values() if row.id not in BUILTIN_PROVIDERS]
        return builtins + custom

    async def set_key(self, team_id: str, provider_id: str, key: str) -> ProviderStatus:
        key = check_key(key)
        binding = PROVIDER_API_KEY.binding(team_id, provider_id)
        ciphertext = self._box.encrypt(key.encode("utf-8"), binding)
        row = await self._change(team_id, provider_id, {"api_key": ciphertext, **_UNCHECKED})
        log.info("provider key set", extra={"team_id": team_id, "provider_id": provider_id})
        return self._status(row)

    async def clear_key(self, team_id: str, provider_id: str) -> ProviderStatus:
        row = await self._change(team_id, provider_id, {"api_key": None, **_UNCHECKED})
        log.info("provider key cleared", extra={"team_id": team_id, "provider_id": provider_id})
        return self._status(row)

    async def create_custom(
        self,
        team_id: str,
        name: str,
        base_url: str,
        *,
        models: Sequence[str] = (),
        default_model: str | None = None,
        key: str | None = None,
    ) -> ProviderStatus:
        """A new OpenAI-compatible provider; its default model is the first model unless named."""
        name = check_name(name)
        base_url = await judged_base_url(base_url, "this provider", self._policy, self._resolver)
        checked_models = check_models(models)
        if default_model is not None:
            default_model = check_model(default_model, "defaultModel")
        elif checked_models:
            default_model = checked_models[0]
        key = check_key(key) if key is not None else None
        provider_id = CUSTOM_PREFIX + uuid.uuid4().hex
        now = self._clock.now()
        ciphertext = None
        if key is not None:
            binding = PROVIDER_API_KEY.binding(team_id, provider_id)
            ciphertext = self._box.encrypt(key.encode("utf-8"), binding)
        row = ProviderRow(
            team_id,
            provider_id,
            "custom",
            name,
            base_url,
            default_model,
            checked_models,
            ciphertext,
            None,
            now,
            now,
        )
        try:
            async with self._db.write() as conn:
                existing = await self._repo.list_providers(conn, team_id)
                customs = [r for r in existing if r.id not in BUILTIN_PROVIDERS]
                if len(customs) >= MAX_CUSTOM_PROVIDERS:
                    raise Conflict(
                        f"a team may have at most {MAX_CUSTOM_PROVIDERS} custom providers",
                        code="providerLimit",
                    )
                _check_name_free(customs, name)
                await self._repo.add_provider(conn, row)
        except IntegrityError as exc:
            raise _name_taken(name) from exc
        log.info("custom provider created", extra={"team_id": team_id, "provider_id": provider_id})
        self._changed(team_id)
        return self._status(row)

    async def update_provider(
        self,
        team_id: str,
        provider_id: str,
        *,
        base_url: str | Keep | None = KEEP,
        default_model: str | Keep | None = KEEP,
        models: Sequence[str] | Keep | None = KEEP,
    ) -> ProviderStatus:
        """Change a provider's address, default model or models.

        For a built-in provider None means its own address and default model again;
        a custom provider always has an address. None for ``models`` lists none.

        An address at another origin (scheme, host, port) forgets the key, unless it is
        the built-in provider's own: whoever may move a provider may not read its key,
        and the key would go with every request to the new address. Set it again there.
        """
        builtin = provider_id in BUILTIN_PROVIDERS
        values: dict[str, object] = {}
        moved_to: str | None = None
        if not isinstance(base_url, Keep):
            if base_url is None and not builtin:
                raise InvalidArgument("a custom provider needs a base URL", field="baseUrl")
            if base_url is not None:
                moved_to = await judged_base_url(
                    base_url, "this provider", self._policy, self._resolver
                )
            values["base_url"] = moved_to
            # Another address has answered nothing yet.
            values.update(_UNCHECKED)
        if not isinstance(default_model, Keep):
            values["default_model"] = (
                None if default_model is None else check_model(default_model, "defaultModel")
            )
        if not isinstance(models, Keep):
            values["models"] = check_models(models or ())
        row = await self._change(team_id, provider_id, values, moved_to=moved_to)
        return self._status(row)

    async def delete_custom(self, team_id: str, provider_id: str) -> None:
        if provider_id in BUILTIN_PROVIDERS:
            raise Conflict(
                "a built-in provider cannot be deleted; clear its key instead",
                code="providerBuiltIn",
            )
        async with self._db.write() as conn:
            if await self._repo.get_provider(conn, team_id, provider_id) is None:
                raise _not_found()
            users = await AgentRepository().names_of_agents_using_provider(
                conn, team_id, provider_id
            )
            if users:
                # Their next turn would fail; the person moves them to another provider first.
                raise Conflict(
                    f"agents use this provider: {', '.join(users[:5])}"
                    + (f" and {len(users) - 5} more" if len(users) > 5 else "")
                    + "; give them another provider first",
                    code="providerInUse",
                )
            await self._repo.remove_provider(conn, team_id, provider_id)
        log.info("custom provider deleted", extra={"team_id": team_id, "provider_id": provider_id})
        self._changed(team_id)

    async def record_error(self, team_id: str, provider_id: str, error: str | None) -> None:
        """Remember how the provider last answered a request (a test or a turn): ``error``,
        or with None that it answered, which makes it verified until a failure or a change."""
        if error is not None:
            error = error[:MAX_ERROR_LENGTH]
        async with self._db.write() as conn:
            row = await self._repo.get_provider(conn, team_id, provider_id)
            unchanged = row is not None and row.last_error == error
            if row is None or (unchanged and (row.verified_at is None) == (error is not None)):
                return
            verified_at = None if error is not None else self._clock.now()
            await self._repo.update_provider(
                conn, team_id, provider_id, last_error=error, verified_at=verified_at
            )
        self._changed(team_id)

    async def require_provider(self, team_id: str, provider_id: str) -> None:
        """Refuse (``providerNotFound``) a provider the team does not have."""
        if provider_id in BUILTIN_PROVIDERS:
            return
        async with self._db.read() as conn:
            if await self._repo.get_provider(conn, team_id, provider_id) is None:
                raise _not_found()

    async def credentials(self, team_id: str, provider_id: str) -> ProviderCredentials:
        """Address, key (None when none is set) and default model, for the agent runtime.

        A key this host cannot open is ``providerKeyUnusable``, never a missing key.
        """
        async with self._db.read() as conn:
            row = await self._repo.get_provider(conn, team_id, provider_id)
        if row is None:
            if provider_id not in BUILTIN_PROVIDERS:
                raise _not_found()
            row = self._builtin_row(team_id, provider_id)
        key = None
        if row.api_key is not None:
            try:
                key = self._open(row).decode("utf-8")
            except SecretUnreadable as exc:
                raise Conflict(
                    f"the key of provider {row.name} cannot be used: {exc.reason}",
                    code="providerKeyUnusable",
                ) from exc
        builtin = BUILTIN_PROVIDERS.get(row.id)
        return ProviderCredentials(
            provider_id=row.id,
            kind=row.kind,
            name=row.name,
            wire=builtin.wire if builtin else "openai",
            base_url=_effective_base_url(row),
            api_key=key,
            default_model=_effective_default_model(row),
        )

    async def _change(
        self,
        team_id: str,
        provider_id: str,
        values: dict[str, object],
        *,
        moved_to: str | None = None,
    ) -> ProviderRow:
        """Set ``values`` on one provider (a built-in one gets its row now); announce it.

        ``moved_to`` is its new address: a key set for another origin is forgotten with it.
        """
        now = self._clock.now()
        async with self._db.write() as conn:
            row = await self._repo.get_provider(conn, team_id, provider_id)
            if row is None:
                if provider_id not in BUILTIN_PROVIDERS:
                    raise _not_found()
                row = self._builtin_row(team_id, provider_id)
                await self._repo.add_provider(conn, row)
            if (
                moved_to is not None
                and row.api_key is not None
                and _key_stays_behind(row, moved_to)
            ):
                values["api_key"] = None
                log.info(
                    "provider key cleared: the provider moved to another origin",
                    extra={"team_id": team_id, "provider_id": provider_id},
                )
            await self._repo.update_provider(conn, team_id, provider_id, updated_at=now, **values)
            updated = await self._repo.get_provider(conn, team_id, provider_id)
        assert updated is not None
        self._changed(team_id)
        return updated

    def _builtin_row(self, team_id: str, provider_id: str) -> ProviderRow:
        spec = BUILTIN_PROVIDERS[provider_id]
        now = self._clock.now()
        return ProviderRow(
            team_id, spec.id, spec.id, spec.name, None, None, (), None, None, now, now
        )

    def _open(self, row: ProviderRow) -> bytes:
        assert row.api_key is not None
        return self._box.decrypt(row.api_key, PROVIDER_API_KEY.binding(row.team_id, row.id))

    def _status(self, row: ProviderRow) -> ProviderStatus:
        reason = None
        if row.api_key is not None:
            try:
                self._open(row)
            except SecretUnreadable as exc:
                reason = f"the key cannot be decrypted on this host: {exc.reason}; set it again"
        elif row.id in BUILTIN_PROVIDERS:
            reason = "no key is set"
        default_model = _effective_default_model(row)
        if reason is None and default_model is None:
            reason = "no default model"
        return ProviderStatus(
            id=row.id,
            kind=row.kind,
            name=row.name,
            base_url=_effective_base_url(row),
            models=row.models,
            default_model=default_model,
            key_set=row.api_key is not None,
            usable=reason is None,
            unusable_reason=reason,
            last_error=row.last_error,
            verified=reason is None and row.last_error is None and row.verified_at is not None,
        )

    def _changed(self, team_id: str) -> None:
        self._announce(team_id, ProvidersChanged())


# What a new key or address resets: nothing has answered with it yet.
_UNCHECKED: dict[str, object] = {"last_error": None, "verified_at": None}


def _effective_base_url(row: ProviderRow) -> str:
    if row.base_url is not None:
        return row.base_url
    return BUILTIN_PROVIDERS[row.id].base_url


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of ``url``, the port filled in for http and https."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def _key_stays_behind(row: ProviderRow, new_url: str) -> bool:
    """Whether a provider's key must not follow it to ``new_url``: another origin than its
    current one, and not the built-in provider's own."""
    allowed = {origin(_effective_base_url(row))}
    builtin = BUILTIN_PROVIDERS.get(row.id)
    if builtin is not None:
        allowed.add(origin(builtin.base_url))
    return origin(new_url) not in allowed


def _effective_default_model(row: ProviderRow) -> str | None:
    if row.default_model is not None or row.id not in BUILTIN_PROVIDERS:
        return row.default_model
    return BUILTIN_PROVIDERS[row.id].default_model


def _not_found() -> NotFound:
    return NotFound("no such provider", code="providerNotFound")


def _name_taken(name: str) -> Conflict:
    return Conflict(f"a provider named {name!r} exists", code="providerNameTaken")


def _check_name_free(customs: list[ProviderRow], name: str) -> None:
    taken = {p.name.casefold() for p in BUILTIN_PROVIDERS.values()}
    taken |= set(BUILTIN_PROVIDERS) | {row.name.casefold() for row in customs}
    if name.casefold() in taken:
        raise _name_taken(name)


def _printable(value: str) -> bool:
    return value.isprintable()


def check_key(key: str) -> str:
    """A key without surrounding whitespace; refused empty, too long or with control or
    space characters (it goes into an HTTP header)."""
    key = key.strip()
    if not key:
        raise InvalidArgument("the key is empty", field="key")
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidArgument(f"a key has at most {MAX_KEY_LENGTH} characters", field="key")
    if not _printable(key) or any(ch.isspace() for ch in key):
        raise InvalidArgument("a key has no spaces or control characters", field="key")
    return key


def check_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise InvalidArgument(f"a name has 1 to {MAX_NAME_LENGTH} characters", field="name")
    if not _printable(name):
        raise InvalidArgument("a name has only printable characters", field="name")
    return name


def check_base_url(url: str) -> str:
    """An http or https address with a host and no user name or password in it."""
    url = url.strip()
    if len(url) > MAX_BASE_URL_LENGTH:
        raise InvalidArgument(
            f"a base URL has at most {MAX_BASE_URL_LENGTH} characters", field="baseUrl"
        )
    if not _printable(url) or any(ch.isspace() for ch in url):
        raise InvalidArgument("a base URL has no spaces or control characters", field="baseUrl")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise InvalidArgument("the base URL is not a valid address", field="baseUrl") from exc
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidArgument("a base URL is an http:// or https:// address", field="baseUrl")
    if parts.username is not None or parts.password is not None:
        raise InvalidArgument(
            "a base URL carries no user name or password; set the key instead", field="baseUrl"
        )
    if parts.fragment:
        raise InvalidArgument("a base URL has no #fragment", field="baseUrl")
    return url.rstrip("/")


def check_model(model: str, field: str) -> str:
    model = model.strip()
    if not 1 <= len(model) <= MAX_MODEL_LENGTH:
        raise InvalidArgument(f"a model name has 1 to {MAX_MODEL_LENGTH} characters", field=field)
    if not _printable(model) or any(ch.isspace() for ch in model):
        raise InvalidArgument("a model name has no spaces or control characters", field=field)
    return model


def check_models(models: Sequence[str]) -> tuple[str, ...]:
    """Models in order, each once."""
    if len(models) > MAX_MODELS:
        raise InvalidArgument(f"a provider lists at most {MAX_MODELS} models", field="models")
    checked = [check_model(model, "models") for model in models]
    return tuple(dict.fromkeys(checked))
