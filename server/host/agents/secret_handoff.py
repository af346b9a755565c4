"""Answers to agents' requests for a secret or a vault item, from the people of a thread.

A secret answers a ``secret`` request of the attention registry and goes straight to
the waiting secure entry: it is never stored (unless an owner or admin saves it to the
vault, sealed like any vault secret), logged, announced or returned. A new vault item
answers a ``vaultItem`` request; the agent learns its id, kind and name only.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from server.common.errors import Conflict, CrewhostError, InvalidArgument
from server.host.agents.attention import AttentionRegistry, AttentionRequest
from server.host.services.vault import VaultItemView, VaultService, VaultSummary

log = logging.getLogger(__name__)

MAX_SECRET_LENGTH = 1024


class SecretHandoffService:
    """Delivers secrets to secure entry, and vault items to ``request_vault_item``."""

    def __init__(self, attention: AttentionRegistry, vault: VaultService) -> None:
        self._attention = attention
        self._vault = vault
        # Requests whose answer is being saved to the vault: a second answer waits for none.
        self._answering: set[str] = set()

    def submit(self, team_id: str, account_id: str, request_id: str, values: Sequence[str]) -> None:
        """Give the waiting entry one value per field it asked for."""
        request = self._attention.pending(team_id, account_id, request_id, "secret")
        assert request.secret is not None
        _check_values(values, len(request.secret.fields))
        self._attention.deliver(request, account_id, tuple(values))
        log.info("secret handed to secure entry", extra={"team_id": team_id, "id": request_id})

    async def submit_and_save(
        self,
        team_id: str,
        account_id: str,
        request_id: str,
        values: Sequence[str],
        name: str | None,
    ) -> VaultItemView:
        """``submit``, and keep the password (and user name) as a login for the page's site."""
        request = self._attention.pending(team_id, account_id, request_id, "secret")
        details = request.secret
        assert details is not None
        _check_values(values, len(details.fields))
        if not details.vault_offered:
            raise InvalidArgument(
                "this secret cannot be saved to the vault", code="secretRequestKind"
            )
        fields: dict[str, object] = {
            "name": name or details.origin.split("://", 1)[-1],
            "sites": [details.origin],
        }
        for label, value in zip(details.fields, values, strict=True):
            if label.kind in ("password", "username"):
                fields[label.kind] = value
        with self._answering_one(request):
            saved = await self._vault.create_item(team_id, "login", fields)
            await self._deliver_or_undo(request, account_id, tuple(values), saved.id)
        log.info("secret handed to secure entry and saved", extra={"team_id": team_id})
        return saved

    def decline(self, team_id: str, account_id: str, request_id: str, kind: str) -> None:
        request = self._attention.pending(
            team_id,
            account_id,
            request_id,
            "secret" if kind == "secret" else "vaultItem",
        )
        self._attention.answer(team_id, account_id, request.id, approve=False)

    async def add_requested_item(
        self, team_id: str, account_id: str, request_id: str, values: Mapping[str, object]
    ) -> VaultSummary:
        """Add the item a ``request_vault_item`` asked for, of the kind it named."""
        request = self._attention.pending(team_id, account_id, request_id, "vaultItem")
        assert request.vault_item is not None
        with self._answering_one(request):
            created = await self._vault.create_item(team_id, request.vault_item.kind, values)
            summary = VaultSummary(created.id, created.kind, created.name, created.sites)
            await self._deliver_or_undo(request, account_id, summary, created.id)
        return summary

    @contextlib.contextmanager
    def _answering_one(self, request: AttentionRequest) -> Iterator[None]:
        """One answer at a time saves to the vault for a request; another is refused."""
        if request.id in self._answering:
            raise Conflict("this request is being answered", code="attentionAnswered")
        self._answering.add(request.id)
        try:
            yield
        finally:
            self._answering.discard(request.id)

    async def _deliver_or_undo(
        self, request: AttentionRequest, account_id: str, payload: Any, item_id: str
    ) -> None:
        """Answer with what was saved; a request that ended while it was saved (it expired,
        was declined, its turn stopped) takes nothing, and the saved item goes again."""
        try:
            self._attention.deliver(request, account_id, payload)
        except CrewhostError:
            await self._vault.delete_item(request.team_id, item_id)
            raise


def _check_values(values: Sequence[str], count: int) -> None:
    """One value per field, each short and printable. Messages never quote a value."""
    if len(values) != count:
        raise InvalidArgument(f"give {count} value(s), one per field", field="values")
    for value in values:
        if not value or len(value) > MAX_SECRET_LENGTH:
            raise InvalidArgument(
                f"each value has 1 to {MAX_SECRET_LENGTH} characters", field="values"
            )
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise InvalidArgument("a value has no control characters", field="values")
