"""The ``fill_from_vault`` tool: a vault item's values into fields of the agent's tab.

The agent names the item by id and which of its fields goes where; it never sees a value.
Each field (and the submit) must be the element the person's card named, and a password,
card number, code or one-time code goes only into a field of its kind. A login fills only
on a tab whose origin is one of the item's sites, into forms that post to that origin or
one of those sites, and submits under protection as ``submit_secret`` does (a submit the
browser stopped, since it would have put the secret in an address, goes to a person). A
card is filled but never paid with: confirming a payment is a person's, so the tab goes to
takeover with the fields filled.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from server.common.errors import CrewhostError
from server.host.services.vault import VaultSummary
from server.host.tools.args import TabArgs, Target, ToolArgs
from server.host.tools.base import Tool
from server.host.tools.browser.submit_secret import enter_and_submit
from server.host.tools.context import ToolContext
from server.host.tools.page.approval import approved_element
from server.host.tools.page.descriptions import element_name, on_page
from server.host.tools.page.secure_entry import (
    EntryOutcome,
    FieldKind,
    desk_of,
    enter,
    plan_on_tab,
    takeover,
)
from server.host.tools.page.takeover_cases import PAYMENT
from server.host.tools.results import ToolFailure

VaultField = Literal[
    "username",
    "password",
    "totpCode",
    "cardholder",
    "number",
    "expiry",
    "securityCode",
    "email",
    "phone",
    "postalAddress",
    "billingAddress",
]
_KIND_FIELDS: dict[str, set[str]] = {
    "login": {"username", "password", "totpCode"},
    "card": {"cardholder", "number", "expiry", "securityCode", "billingAddress"},
    "contact": {"email", "phone", "postalAddress"},
}
_FIELD_KINDS: dict[str, FieldKind] = {
    "username": "username",
    "password": "password",
    "totpCode": "oneTimeCode",
    "number": "cardNumber",
    "securityCode": "securityCode",
}


class VaultFieldArg(ToolArgs):
    target: Target = Field(description="The field, as a snapshot shows it (a ref is best).")
    field: VaultField = Field(description="Which of the item's values goes into it.")


class FillFromVaultArgs(TabArgs):
    item_id: str = Field(min_length=1, max_length=64, description="From list_vault_items.")
    fields: list[VaultFieldArg] = Field(min_length=1, max_length=8)
    submit: Target | None = Field(
        default=None,
        description="A login's submit button; Enter in the last field when left out. A card "
        "is never submitted.",
    )


async def _value(context: ToolContext, item: VaultSummary, name: str) -> str | None:
    vault = desk_of(context).vault
    if name == "password":
        return await vault.open_secret(context.team_id, item.id, "password")
    if name == "totpCode":
        return await vault.one_time_code(context.team_id, item.id)
    if name == "number":
        return await vault.open_secret(context.team_id, item.id, "number")
    if name == "securityCode":
        return await vault.open_secret(context.team_id, item.id, "security_code")
    view = await vault.read_item(context.team_id, item.id)
    column = {"postalAddress": "postal_address", "billingAddress": "billing_address"}.get(name)
    value = getattr(view, column or name)
    return value if isinstance(value, str) else None


async def fill_from_vault(context: ToolContext, args: FillFromVaultArgs) -> dict[str, Any]:
    vault = desk_of(context).vault
    try:
        item = await vault.summary(context.team_id, args.item_id)
    except CrewhostError as exc:
        raise ToolFailure(exc.code, "no such vault item; list_vault_items shows them") from None
    unknown = [f.field for f in args.fields if f.field not in _KIND_FIELDS[item.kind]]
    if unknown:
        raise ToolFailure("invalidArguments", f"a {item.kind} has no {', '.join(unknown)}")
    card = item.kind == "card"
    targets = [(f.target, _FIELD_KINDS.get(f.field, "other")) for f in args.fields]
    submit = None if card else args.submit
    plan = await plan_on_tab(
        context,
        args.tab_id,
        targets,
        submit,
        approved=[approved_element(f.target) for f in args.fields],
        approved_submit=approved_element(submit) if submit is not None else None,
        check_forms=item.kind == "login",
        check_kinds=True,
    )
    if isinstance(plan, EntryOutcome):
        return plan.to_result(args.tab_id)
    if item.kind == "login" and plan.origin not in item.sites:
        raise ToolFailure(
            "vaultSiteMismatch",
            f"this login is for {', '.join(item.sites)}, not {plan.origin}",
        )
    # The form's action, not only the page, must be the login's: a submit posts it there.
    elsewhere = [o for o in plan.destinations() if o != plan.origin and o not in item.sites]
    if item.kind == "login" and elsewhere:
        sent_to = ", ".join(o or "an address that is no web origin" for o in elsewhere)
        raise ToolFailure(
            "vaultSiteMismatch",
            f"this login is for {', '.join(item.sites)}; the form would send it to {sent_to}",
        )
    values: list[str] = []
    for wanted in args.fields:
        try:
            value = await _value(context, item, wanted.field)
        except CrewhostError as exc:
            raise ToolFailure(exc.code, "the vault item's value cannot be used here") from None
        if value is None:
            raise ToolFailure("vaultFieldEmpty", f"the vault item has no {wanted.field}")
        values.append(value)
    if card:
        outcome = await enter(context, plan, values, submit=False)
        if outcome.status == "entered":
            outcome = takeover(context, plan.tab, PAYMENT)
        return outcome.to_result(plan.tab.id)
    return (await enter_and_submit(context, plan, values)).to_result(plan.tab.id)


async def describe(context: ToolContext, args: FillFromVaultArgs) -> str:
    names = [await element_name(context, args.tab_id, f.target) for f in args.fields]
    where = on_page(context, args.tab_id)
    filled = f"Fill {', '.join(names)} from the vault{where}"
    if args.submit is None:
        return filled
    return f"{filled}, then press {await element_name(context, args.tab_id, args.submit)}"


TOOL = Tool(
    name="fill_from_vault",
    description=(
        "Fill fields of your tab from a vault item (by its id from list_vault_items); you never "
        "see the values. A login fills only on one of its sites and is submitted; a card is "
        "filled and a person confirms the payment."
    ),
    args=FillFromVaultArgs,
    gated=True,
    run=fill_from_vault,
    describe=describe,
)
