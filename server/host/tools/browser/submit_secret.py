"""The ``submit_secret`` tool: a person gives a secret for fields of the agent's tab.

The agent names the fields; the host resolves them first and asks the people of the
thread with public facts only (the site's origin, the fields' labels, the purpose). A
member answers on ``browser-secret-handoff-v1`` (an owner or admin may also save it to
the vault, ``browser-secret-vault-v1``), never in chat and never as a tool argument.
The secret goes from that answer into the page under protection; the agent learns only
``entered``, ``declined``, ``timeout`` or why a person was asked to take the tab over.

A submit the browser stopped because it would have put a secret in an address (a form with
no method, which the browser sends with GET; see ``browser.protection``) left the page
where it was: the agent is told ``takeover`` (``entryFailed``), and a person takes the tab.
So does a submit whose next page's address carries one (a site's redirect). Every value a
person hands over is held to the page but a user name, in a field that reads as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.common.protocol.events import SecretRequestDetails
from server.host.browser.protection import protection_of
from server.host.tools.args import TabArgs, Target, ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.secure_entry import (
    EntryOutcome,
    EntryPlan,
    FieldKind,
    ask_thread,
    desk_of,
    enter,
    plan_on_tab,
    takeover,
    unanswered,
)
from server.host.tools.page.takeover_cases import TakeoverCase
from server.host.tools.results import ToolFailure

MAX_SECRET_FIELDS = 4
ADDRESS_STOPPED = TakeoverCase(
    "entryFailed",
    "the form would send the secret in the next page's address (sent with GET); the browser "
    "stopped it",
)


async def enter_and_submit(
    context: ToolContext, plan: EntryPlan, values: Sequence[str]
) -> EntryOutcome:
    """``enter`` with its submit; a page that stayed because the browser stopped a navigation
    carrying a secret (the fields emptied, nothing shown) goes to a person instead. A page's
    own request stopped meanwhile (a fetch) is not the submit's: a single-page sign-in that
    went on is entered."""
    before = protection_of(plan.tab)
    stopped_before = before.navigations_stopped if before is not None else 0
    outcome = await enter(context, plan, values)
    held = protection_of(plan.tab)
    if outcome.page != "kept" or held is None or held.navigations_stopped == stopped_before:
        return outcome
    held.hand_to_person()
    return takeover(context, plan.tab, ADDRESS_STOPPED)


class SecretFieldArg(ToolArgs):
    target: Target = Field(description="The field, as a snapshot shows it (a ref is best).")
    kind: FieldKind | None = Field(
        default=None,
        description="What goes into it; taken from the field's type and autocomplete if left out.",
    )


class SubmitSecretArgs(TabArgs):
    fields: list[SecretFieldArg] = Field(
        min_length=1,
        max_length=MAX_SECRET_FIELDS,
        description="The fields the secret goes into, in order (a user name may come first).",
    )
    purpose: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)
    ] = Field(description="What the secret is for, as the person will read it.")
    submit: Target | None = Field(
        default=None,
        description="The button that submits the form; Enter in the last field when left out.",
    )


async def submit_secret(context: ToolContext, args: SubmitSecretArgs) -> dict[str, Any]:
    desk_of(context)  # refused at once where there is no secure entry
    if context.caller.thread_id is None:
        raise ToolFailure("attentionUnavailable", "nobody can be asked outside a conversation")
    targets = [(f.target, f.kind) for f in args.fields]
    plan = await plan_on_tab(context, args.tab_id, targets, args.submit)
    if isinstance(plan, EntryOutcome):
        return plan.to_result(args.tab_id)
    kinds = {label.kind for label in plan.labels}
    details = SecretRequestDetails(
        tab_id=plan.tab.id,
        origin=plan.origin,
        fields=plan.labels,
        purpose=args.purpose,
        vault_offered="password" in kinds and kinds <= {"password", "username"},
    )
    reply = await ask_thread(
        context, "submit_secret", f"{args.purpose} on {plan.origin}", secret=details
    )
    not_answered = unanswered(reply, tabId=plan.tab.id)
    if not_answered is not None:
        return not_answered
    outcome = await enter_and_submit(context, plan, list(reply.payload))
    return outcome.to_result(plan.tab.id)


TOOL = Tool(
    name="submit_secret",
    description=(
        "Ask a person for a secret (a password, a one-time code) for fields of your tab. "
        "You never see it: the person enters it, the host fills the fields and submits. "
        "Returns entered, declined, timeout, or takeover with the reason. Never retry a secret."
    ),
    args=SubmitSecretArgs,
    gated=False,
    run=submit_secret,
)
