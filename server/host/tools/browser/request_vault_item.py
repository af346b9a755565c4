"""The ``request_vault_item`` tool: asks an owner or admin to add a login, card or contact.

The agent may fill in the fields that are not secret; the person adds the rest (a
password, a card number, a security code) in the vault form, answered on
``browser-secret-vault-v1``. The agent learns only the new item's id, kind and name.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.events import VaultItemRequestDetails
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.secure_entry import ask_thread, unanswered
from server.host.tools.results import ToolFailure

Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=254)]
Long = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]


class RequestVaultItemArgs(ToolArgs):
    kind: Literal["login", "card", "contact"]
    reason: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)
    ] = Field(description="Why the item is needed, as the person will read it.")
    name: Short | None = Field(default=None, description="A name for the item.")
    sites: list[Short] | None = Field(default=None, max_length=5, description="A login's sites.")
    username: Short | None = None
    cardholder: Short | None = None
    expiry: Short | None = None
    billing_address: Long | None = None
    email: Short | None = None
    phone: Short | None = None
    postal_address: Long | None = None


_PREFILL_OF: dict[str, tuple[str, ...]] = {
    "login": ("name", "sites", "username"),
    "card": ("name", "cardholder", "expiry", "billing_address"),
    "contact": ("name", "email", "phone", "postal_address"),
}


async def request_vault_item(context: ToolContext, args: RequestVaultItemArgs) -> dict[str, Any]:
    given = {name for name in args.model_fields_set if getattr(args, name) is not None}
    misplaced = sorted(given - set(_PREFILL_OF[args.kind]) - {"kind", "reason"})
    if misplaced:
        raise ToolFailure("invalidArguments", f"a {args.kind} has no {', '.join(misplaced)}")
    prefill: dict[str, str | list[str]] = {
        name: getattr(args, name) for name in _PREFILL_OF[args.kind] if name in given
    }
    reply = await ask_thread(
        context,
        "request_vault_item",
        f"add a {args.kind} to the vault: {args.reason}",
        vault_item=VaultItemRequestDetails(kind=args.kind, prefill=prefill, reason=args.reason),
    )
    not_answered = unanswered(reply)
    if not_answered is not None:
        return not_answered
    item = reply.payload
    return {
        "status": "added",
        "item": {"id": item.id, "kind": item.kind, "name": item.name},
        "next": "fill_from_vault fills it by this id.",
    }


TOOL = Tool(
    name="request_vault_item",
    description=(
        "Ask an owner or admin to add a login, card or contact the vault lacks. You may "
        "prefill fields that are not secret; never a password or card number. Returns the "
        "new item's id, kind and name."
    ),
    args=RequestVaultItemArgs,
    gated=False,
    run=request_vault_item,
)
