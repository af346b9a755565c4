"""Secure entry: a secret from a person or the vault into fields of a tab, never via the model.

The order is the safety argument:

1. ``plan_entry`` (in the tab's queue) resolves the fields the agent named and reads only
   their public facts (label, kind, origin, the forms a submit would send them with); a
   field in a frame of another origin, one hidden, disabled or read-only, one that is not
   the element a person approved, or (for a vault's value) not of the value's kind, is
   refused before anyone is asked or any value is opened. A form that would send them with
   GET (into the next page's address) goes to a person.
2. ``enter`` (in the tab's queue again) checks that the document, origin and forms are
   still the planned ones, puts the tab under protection (its live views end, input,
   scripts and field values are refused), fills the fields and submits.
3. A new document releases protection, unless its address carries a secret (a redirect
   put it there): that page goes to a person, protection kept. A submit that keeps the
   document is given ``secret_submit_wait``; then the fields are emptied and the document
   scanned for the values. Absent: the page stays (a single-page sign-in shows its next
   step) with protection kept until a main-frame navigation. Present: the address is
   loaded again with GET, which replaces the document and never replays a form's POST.

Any failure keeps protection and asks a person to take the tab over; a secret is never
retried. The fields it filled are emptied first, and a page that then shows no value may be
watched and steered by the person who holds the tab (nobody else, and no agent script) until
a new document. Messages and results never carry a value.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.common.protocol.events import (
    SecretFieldLabel,
    SecretRequestDetails,
    VaultItemRequestDetails,
)
from server.common.tasks import wait_set
from server.host.browser.protection import TabProtection, protect
from server.host.browser.protection_state import Protection
from server.host.browser.tabs import Tab
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.services.vault import site_origin as origin_of
from server.host.tools.args import Target
from server.host.tools.context import PersonReply, SecureEntryDesk, ToolContext
from server.host.tools.page.approval import ApprovedElement, require_approved
from server.host.tools.page.tab_access import announce_takeover, reachable_tab
from server.host.tools.page.takeover_cases import CROSS_ORIGIN_FRAME, TakeoverCase, find_case
from server.host.tools.page.targets import Resolved, element_of, inspect, resolve_target
from server.host.tools.results import ToolFailure

log = logging.getLogger(__name__)

FieldKind = Literal["password", "username", "oneTimeCode", "cardNumber", "securityCode", "other"]
TAB_HOLDS_SECRET = "tabHoldsSecret"  # noqa: S105 - a close code, not a secret
# Filling, the submit's wait, and a load again with GET, at most.
ENTRY_DEADLINE = 60.0
_NOT_ENTERED = TakeoverCase("entryFailed", "the secret could not be entered")
_GET_FORM = TakeoverCase(
    "entryFailed", "the form would send the secret in the next page's address (a GET form)"
)
_ADDRESS_HELD = TakeoverCase(
    "entryFailed",
    "the site put the secret in the next page's address (a redirect); the page is kept for a "
    "person",
)
# The kinds whose values are secrets: no address the tab sends may carry one. A vault's
# other values (a user name, a card holder, an address) go where a form sends them.
_SECRET_KINDS: frozenset[FieldKind] = frozenset(
    {"password", "oneTimeCode", "cardNumber", "securityCode"}
)
# The input types a value of each kind may go into: a password only into a field that hides
# it; a card's number or code and a one-time code into a text-like field, never one whose
# text the browser keeps or sends on (search, email, url). A textarea has type "".
_TYPES_FOR: dict[FieldKind, frozenset[str]] = {
    "password": frozenset({"password"}),
    "cardNumber": frozenset({"text", "tel", "number", "password"}),
    "securityCode": frozenset({"text", "tel", "number", "password"}),
    "oneTimeCode": frozenset({"text", "tel", "number", "password"}),
}
# The autocomplete field name each kind's field may declare, besides none, on and off.
_AUTOCOMPLETE_FOR: dict[FieldKind, str] = {
    "cardNumber": "cc-number",
    "securityCode": "cc-csc",
    "oneTimeCode": "one-time-code",
}


class TakeoverNeeded(Exception):
    """Secure entry cannot go on by itself: a person takes the tab (``case`` says why)."""

    def __init__(self, reason: str | TakeoverCase) -> None:
        case = reason if isinstance(reason, TakeoverCase) else TakeoverCase("entryFailed", reason)
        super().__init__(case.reason)
        self.case = case


@dataclass
class EntryField:
    """One field a value goes into: its pick in the tools' world and its public facts.
    ``kind`` is the one asked for (the agent's, or a vault value's), else read from the
    field; ``reads_as_user_name`` is the field's own, whatever was asked."""

    resolved: Resolved
    label: str
    kind: FieldKind
    reads_as_user_name: bool = False


@dataclass(frozen=True)
class FormSent:
    """A form that holds a planned field: the method and the address a submit sends it to."""

    method: str
    action: str
    declared: bool

    def scripted(self) -> bool:
        """A ``javascript:`` action: the page's own script, which holds the fields anyway."""
        return self.action.lower().startswith("javascript:")

    def puts_in_address(self) -> bool:
        """Whether a submit would put the fields in the next page's address. A bare form (no
        method, no action) is a single-page sign-in's, whose script takes the submit."""
        return self.method == "get" and self.declared and not self.scripted()


@dataclass
class EntryPlan:
    """What ``plan_entry`` found: checked again, just before entry, by ``enter``."""

    tab: Tab
    origin: str
    document: float
    fields: list[EntryField]
    submit: Resolved | None
    labels: list[SecretFieldLabel] = field(default_factory=list)
    # The forms holding a field, read when the entry submits secrets (None: not read).
    forms: list[FormSent] | None = None
    # Whether each field's kind is its value's own (a vault item's, checked against the
    # field), not a name the agent gave what a person types.
    kinds_known: bool = False

    def destinations(self) -> list[str | None]:
        """The origins a submit may send the fields to (None: not a web origin)."""
        return [origin_of(form.action) for form in self.forms or () if not form.scripted()]


@dataclass(frozen=True)
class EntryOutcome:
    """How an entry ended: ``entered`` (``page``: ``new`` document, ``kept`` or ``reloaded``)
    or ``takeover`` with its case."""

    status: Literal["entered", "takeover"]
    page: Literal["new", "kept", "reloaded"] | None = None
    case: TakeoverCase | None = None

    def to_result(self, tab_id: str) -> dict[str, Any]:
        if self.case is not None:
            return {
                "status": "takeover",
                "tabId": tab_id,
                "code": self.case.code,
                "reason": self.case.reason,
                "next": "A person was asked to take the tab over. Stop working in it until "
                "they hand it back, then take a snapshot. Do not ask for the secret again.",
            }
        next_step = {
            "new": "The page loaded a new document; take a snapshot to see where it went.",
            "kept": "The page stayed (the fields were emptied). Take a snapshot to see its next "
            "step; scripts stay refused on this tab until it loads a new page.",
            "reloaded": "The page was loaded again to clear what it showed. Take a snapshot.",
        }[self.page or "new"]
        return {"status": "entered", "tabId": tab_id, "page": self.page, "next": next_step}


def desk_of(context: ToolContext) -> SecureEntryDesk:
    if context.secure_entry is None:
        raise ToolFailure("secureEntryUnavailable", "secure entry is not available here")
    return context.secure_entry


async def ask_thread(
    context: ToolContext,
    tool: str,
    summary: str,
    *,
    secret: SecretRequestDetails | None = None,
    vault_item: VaultItemRequestDetails | None = None,
) -> PersonReply:
    """Asks the people who see the calling agent's thread (in a turn nobody sits in, its
    approvers, for as long as its other requests wait); ``attentionUnavailable`` where
    nobody can be asked (a call outside a thread)."""
    desk = desk_of(context)
    caller = context.caller
    if desk.visible_to is None or caller.thread_id is None or caller.agent_id is None:
        raise ToolFailure("attentionUnavailable", "nobody can be asked outside a conversation")
    unattended = desk.unattended
    seconds = context.settings.secret_answer_wait
    if unattended is not None and unattended.attention_seconds is not None:
        seconds = unattended.attention_seconds
    return await desk.ask_person(
        team_id=context.team_id,
        thread_id=caller.thread_id,
        agent_id=caller.agent_id,
        tool=tool,
        summary=summary,
        visible_to=desk.visible_to,
        secret=secret,
        vault_item=vault_item,
        seconds=seconds,
        addressed_to=(unattended.approvers or None) if unattended is not None else None,
        routine_id=unattended.routine_id if unattended is not None else None,
    )


def unanswered(reply: PersonReply, **extra: Any) -> dict[str, Any] | None:
    """The result for a request nobody answered (``timeout``) or a person declined."""
    if reply.outcome == "answered":
        return None
    if reply.outcome == "timeout":
        return {"status": "timeout", **extra, "next": "Nobody answered in time."}
    return {"status": "declined", **extra, "next": "Ask the user what to do."}


def _kind_of(facts: dict[str, Any], asked: FieldKind | None) -> FieldKind:
    if asked is not None:
        return asked
    autocomplete = str(facts.get("autocomplete") or "")
    if facts.get("type") == "password" or "password" in autocomplete:
        return "password"
    if autocomplete == "one-time-code":
        return "oneTimeCode"
    if autocomplete == "cc-number":
        return "cardNumber"
    if autocomplete == "cc-csc":
        return "securityCode"
    if autocomplete in ("username", "email") or facts.get("type") == "email":
        return "username"
    return "other"


def _reads_as_user_name(facts: dict[str, Any]) -> bool:
    """Whether the field itself reads as a user name, whatever kind was asked for it: a text
    or email input that declares ``username`` or ``email``, or an email input that declares
    nothing else (a password, a card's field or a one-time code is never one)."""
    tokens = str(facts.get("autocomplete") or "").split()
    declared = tokens[-1] if tokens else ""
    if declared in ("username", "email"):
        return facts.get("type") in ("text", "email")
    return facts.get("type") == "email" and declared in ("", "on", "off")


async def _facts(resolved: Resolved) -> dict[str, Any] | None:
    if resolved.pick is None:
        return None
    try:
        facts: dict[str, Any] | None = await evaluate_isolated(
            resolved.page, "secret-field", resolved.pick
        )
    except (PlaywrightError, IsolatedScriptError):
        return None
    return facts


def _require_kind(facts: dict[str, Any], kind: FieldKind, label: str) -> None:
    """Refuses a field that is not of the kind of the value meant for it (see ``_TYPES_FOR``)."""
    types = _TYPES_FOR.get(kind)
    if types is None:
        return
    tokens = str(facts.get("autocomplete") or "").split()
    declared = tokens[-1] if tokens else ""
    wanted = _AUTOCOMPLETE_FOR.get(kind)
    if facts.get("type") not in types or (
        wanted is not None and declared not in ("", "on", "off", wanted)
    ):
        raise ToolFailure(
            "secretFieldInvalid",
            f"{label} is not a field for a {kind} (it is type {facts.get('type') or 'text'}"
            f"{f', autocomplete {declared}' if declared else ''}); nothing was typed",
        )


async def _forms_sent(page: Page, fields: Sequence[EntryField]) -> list[FormSent]:
    """How the forms holding ``fields`` may send them: each form's method and action, and
    each of its submit buttons' own (a submit by any button, or an Enter, is one of these)."""
    picks = [entry.resolved.pick for entry in fields]
    found = await evaluate_isolated(page, "secret-form", picks)
    if found is None:
        raise TakeoverNeeded("a field went away while the entry was planned")
    return [FormSent(str(f["method"]), str(f["action"]), bool(f["declared"])) for f in found]


async def plan_entry(
    tab: Tab,
    page: Page,
    targets: Sequence[tuple[Target, FieldKind | None]],
    submit: Target | None,
    *,
    approved: Sequence[ApprovedElement | None] = (),
    approved_submit: ApprovedElement | None = None,
    check_forms: bool = True,
    check_kinds: bool = False,
) -> EntryPlan:
    """The fields for ``targets`` and their public facts; refuses what entry cannot fill and
    raises ``TakeoverNeeded`` for a field in a frame of another origin.

    ``approved`` holds, for each target, the element a person approved (None: nobody was
    asked), and ``approved_submit`` that of ``submit``: another element is refused
    (``targetChanged``). With ``check_kinds`` each field must suit its asked kind, which is
    its value's own (a vault item's). With ``check_forms`` (an entry that submits secrets)
    the forms holding the fields are read for the plan, and one that would send them with
    GET raises ``TakeoverNeeded``."""
    origin = origin_of(page.url)
    if origin is None:
        raise ToolFailure("secretOriginUnknown", "this page has no web origin to enter a secret on")
    document = float(await evaluate_isolated(page, "document-id"))
    case = await find_case(tab, page)
    if case is not None:
        raise TakeoverNeeded(case)
    fields: list[EntryField] = []
    for index, (target, asked) in enumerate(targets):
        try:
            resolved = await resolve_target(tab, page, target)
        except ToolFailure as failure:
            if failure.code == "targetNotFound" and _foreign_frames(page, origin):
                raise TakeoverNeeded(CROSS_ORIGIN_FRAME) from None
            raise
        facts = await _facts(resolved)
        if facts is None:
            raise ToolFailure("targetNotFound", f"{resolved.label} went away")
        if facts["framed"] and facts["origin"] != facts["topOrigin"]:
            raise TakeoverNeeded(CROSS_ORIGIN_FRAME)
        if not facts["fillable"]:
            raise ToolFailure("secretFieldInvalid", f"{resolved.label} is not a text field")
        if not facts["visible"] or facts["disabled"] or facts["readOnly"]:
            raise ToolFailure(
                "secretFieldInvalid", f"{resolved.label} is hidden, disabled or read-only"
            )
        person_named = approved[index] if index < len(approved) else None
        if person_named is not None:
            await require_approved(person_named, resolved, await inspect(resolved))
        kind = _kind_of(facts, asked)
        if check_kinds:
            _require_kind(facts, kind, resolved.label)
        label = str(facts["label"]) or resolved.label
        fields.append(EntryField(resolved, label, kind, _reads_as_user_name(facts)))
    picks = [f.resolved.pick for f in fields]
    if len(set(picks)) != len(picks):
        raise ToolFailure("invalidArguments", "the same field is named twice")
    submit_resolved = None
    if submit is not None:
        submit_resolved = await resolve_target(tab, page, submit)
        if approved_submit is not None:
            await require_approved(approved_submit, submit_resolved, await inspect(submit_resolved))
    plan = EntryPlan(tab, origin, document, fields, submit_resolved, kinds_known=check_kinds)
    plan.labels = [SecretFieldLabel(label=f.label[:120], kind=f.kind) for f in fields]
    if check_forms:
        plan.forms = await _forms_sent(page, fields)
        if any(form.puts_in_address() for form in plan.forms):
            raise TakeoverNeeded(_GET_FORM)
    return plan


def _foreign_frames(page: Page, origin: str) -> bool:
    """Whether the page holds a frame of another origin (which our scripts cannot reach)."""
    return any(
        origin_of(frame.url) not in (None, origin)
        for frame in page.frames
        if frame is not page.main_frame
    )


async def _still_planned(plan: EntryPlan, page: Page) -> None:
    """Just before entry: the same document at the same origin, every field still there."""
    if origin_of(page.url) != plan.origin:
        raise TakeoverNeeded("the tab is on another site than when the secret was asked for")
    if float(await evaluate_isolated(page, "document-id")) != plan.document:
        raise TakeoverNeeded("the page changed since the secret was asked for")
    for entry in plan.fields:
        if entry.resolved.page is not page or await _facts(entry.resolved) is None:
            raise TakeoverNeeded("a field went away since the secret was asked for")
    if plan.forms is not None and await _forms_sent(page, plan.fields) != plan.forms:
        raise TakeoverNeeded("the form changed since the secret was asked for")


async def _keep_submit_in_tab(plan: EntryPlan, page: Page) -> None:
    """Aims each form holding a field at the tab itself (``secret-form-target``): a submit
    into a new window opens a popup whose request no route of the protected tab's sees,
    and whose address (a GET form's) would carry the secret into another tab."""
    picks = [entry.resolved.pick for entry in plan.fields]
    changed = await evaluate_isolated(page, "secret-form-target", picks)
    if changed is None:
        raise TakeoverNeeded("a field went away while the entry was planned")
    if changed:
        log.info(
            "secure entry kept a form's submit in its tab",
            extra={"tab_id": plan.tab.id, "targets": changed},
        )


# The keys of an Enter, as a keyboard sends them.
_ENTER = {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}


async def _fill(
    plan: EntryPlan, page: Page, protection: TabProtection, values: Sequence[str], *, submit: bool
) -> None:
    """Each value typed into its field through the browser's input path (CDP), which the
    page sees as a person's typing; then the submit."""
    session = protection.session
    for entry, value in zip(plan.fields, values, strict=True):
        if session is None:
            await (await element_of(entry.resolved)).fill(value, timeout=5_000)
            continue
        if not await evaluate_isolated(page, "secret-focus", entry.resolved.pick):
            raise TakeoverNeeded("a field could not take focus")
        await session.send("Input.insertText", {"text": value})
    if not submit:
        return
    if plan.submit is not None:
        button = await element_of(plan.submit)
        await button.click(timeout=5_000, no_wait_after=True)
    elif session is not None:
        await session.send("Input.dispatchKeyEvent", {"type": "keyDown", **_ENTER, "text": "\r"})
        await session.send("Input.dispatchKeyEvent", {"type": "keyUp", **_ENTER})
    else:
        element = await element_of(plan.fields[-1].resolved)
        await element.press("Enter", timeout=5_000, no_wait_after=True)


async def _after_submit(
    context: ToolContext,
    plan: EntryPlan,
    page: Page,
    protection: TabProtection,
    values: Sequence[str],
) -> EntryOutcome:
    wait = context.settings.secret_submit_wait
    if await wait_set(protection.landed, wait):
        return _landed(protection)
    emptied = await _emptied(plan, page, protection, values)
    if protection.landed.is_set():
        return _landed(protection)
    if emptied:
        protection.keep()
        return EntryOutcome("entered", "kept")
    log.info("secure entry reloads a page that shows the secret", extra={"tab_id": plan.tab.id})
    # A GET of the address replaces the document; a reload could replay a form's POST.
    await page.goto(page.url, wait_until="domcontentloaded", timeout=15_000)
    if not await wait_set(protection.released, wait):
        raise TakeoverNeeded("the page could not be cleared of the secret")
    return EntryOutcome("entered", "reloaded")


def _landed(protection: TabProtection) -> EntryOutcome:
    """A new document came: entered, unless its address carried a secret (a redirect that
    put it there), which a person takes over with protection kept."""
    if protection.address_held:
        raise TakeoverNeeded(_ADDRESS_HELD)
    return EntryOutcome("entered", "new")


async def _emptied(
    plan: EntryPlan, page: Page, protection: TabProtection, values: Sequence[str]
) -> bool:
    """Empties the plan's fields and scans the document: whether no value shows any more."""
    try:
        picks = [entry.resolved.pick for entry in plan.fields]
        left = int(await evaluate_isolated(page, "secret-clear", picks))
        shown = await _shown(page, values)
    except (PlaywrightError, IsolatedScriptError):
        return protection.released.is_set()
    return left == 0 and not shown


async def _shown(page: Page, values: Sequence[str], masked: Sequence[str] = ()) -> bool:
    """Whether any of ``values`` shows in the page, the values of the ``masked`` fields aside."""
    wanted = {"values": list(values), "masked": list(masked)}
    return bool(await evaluate_isolated(page, "secret-scan", wanted))


async def _mask_for_person(
    plan: EntryPlan, page: Page, protection: TabProtection, values: Sequence[str]
) -> None:
    """Fields filled to stay (a card, before a person confirms its payment): each shows dots
    for its characters, and a page that then shows no value elsewhere is left for the person
    who takes it over to watch and steer (agents stay refused). A page that echoes one, or a
    field that cannot be masked, stays closed to every view until a new document."""
    picks = [entry.resolved.pick for entry in plan.fields if entry.resolved.pick is not None]
    try:
        masked = int(await evaluate_isolated(page, "secret-mask", picks))
        shown = await _shown(page, values, picks)
    except (PlaywrightError, IsolatedScriptError):
        return
    if masked == len(plan.fields) and not shown and not protection.released.is_set():
        protection.hand_to_person()


async def _clear_for_takeover(
    plan: EntryPlan, page: Page, protection: TabProtection, values: Sequence[str]
) -> None:
    """A failed entry: the fields it filled are emptied, and a page that then shows no value
    is left for the person who takes it over to watch and steer (agents stay refused). A
    page that still shows one stays closed to every view until a new document."""
    if protection.released.is_set():
        return
    if await _emptied(plan, page, protection, values) and not protection.released.is_set():
        protection.hand_to_person()


def _request_takeover(context: ToolContext, tab: Tab, case: TakeoverCase) -> None:
    announce_takeover(context, tab, f"secure entry: {case.reason}", case.code)


def takeover(context: ToolContext, tab: Tab, case: TakeoverCase) -> EntryOutcome:
    """Asks a person to take the tab; the tab keeps whatever protection it has."""
    _request_takeover(context, tab, case)
    return EntryOutcome("takeover", case=case)


async def plan_on_tab(
    context: ToolContext,
    tab_id: str,
    targets: Sequence[tuple[Target, FieldKind | None]],
    submit: Target | None,
    *,
    approved: Sequence[ApprovedElement | None] = (),
    approved_submit: ApprovedElement | None = None,
    check_forms: bool = True,
    check_kinds: bool = False,
) -> EntryPlan | EntryOutcome:
    """``plan_entry`` (its keywords are its own) in the tab's queue; a takeover it needs is
    asked for and returned."""
    tab = reachable_tab(context, tab_id)
    # A kept page (a single-page sign-in's next step) takes its next secret; an entry under
    # way takes none, and neither does a page left to a person after a failed entry.
    if tab.protection is Protection.ENTERING:
        raise ToolFailure(TAB_HOLDS_SECRET, "a secret is being entered in this tab; wait for it")
    if tab.protection is Protection.TAKEOVER:
        raise ToolFailure(
            TAB_HOLDS_SECRET, "a person was asked to take this tab over; a secret is not retried"
        )
    try:
        done = await context.engine.run(
            context.team_id,
            tab.id,
            context.caller,
            lambda page: plan_entry(
                tab,
                page,
                targets,
                submit,
                approved=approved,
                approved_submit=approved_submit,
                check_forms=check_forms,
                check_kinds=check_kinds,
            ),
        )
    except TakeoverNeeded as needed:
        return takeover(context, tab, needed.case)
    assert done.value is not None
    return done.value


def _is_user_name(plan: EntryPlan, entry: EntryField) -> bool:
    """A vault's user name, or what a person typed for a field that reads as one (the
    agent's word for a field is not taken: it could call a password field a user name)."""
    return entry.kind == "username" and (plan.kinds_known or entry.reads_as_user_name)


def _held_to(plan: EntryPlan, values: Sequence[str]) -> tuple[list[str], list[str]]:
    """What the page is held to while protection lasts: the values it may not show an agent
    (all but a user name, which a signed-in page shows and sends as a matter of course), and
    the secrets among them, which no address it sends may carry: all a person handed over,
    and a vault's passwords, codes and card numbers."""
    held: list[str] = []
    secrets: list[str] = []
    for entry, value in zip(plan.fields, values, strict=True):
        if not value or _is_user_name(plan, entry):
            continue
        held.append(value)
        if not plan.kinds_known or entry.kind in _SECRET_KINDS:
            secrets.append(value)
    return held, secrets


async def enter(
    context: ToolContext, plan: EntryPlan, values: Sequence[str], *, submit: bool = True
) -> EntryOutcome:
    """Fills ``values`` into the plan's fields and submits, under protection (see above).
    Without ``submit`` the fields stay filled, masked, and the tab protected (``kept``)."""
    desk_of(context)  # refused where secure entry has no desk
    tab = plan.tab
    protection: TabProtection | None = None

    async def operation(page: Page) -> EntryOutcome:
        nonlocal protection
        await _still_planned(plan, page)
        # The tab's live views close before protect returns (they hear ProtectionChanged).
        protection = await protect(tab, page, plan.origin, context.engine.signals)
        # What the page may not show, and the secrets no address may carry.
        held, secrets = _held_to(plan, values)
        protection.values = (*protection.values, *held)
        protection.secrets = (*protection.secrets, *secrets)
        try:
            await _keep_submit_in_tab(plan, page)
            await _fill(plan, page, protection, values, submit=submit)
            if not submit:
                await _mask_for_person(plan, page, protection, held)
                return EntryOutcome("entered", "kept")
            return await _after_submit(context, plan, page, protection, held)
        except (TakeoverNeeded, PlaywrightError, IsolatedScriptError, ToolFailure):
            await _clear_for_takeover(plan, page, protection, held)
            raise

    try:
        done = await context.engine.run(
            context.team_id, tab.id, context.caller, operation, deadline=ENTRY_DEADLINE
        )
    except TakeoverNeeded as needed:
        return takeover(context, tab, needed.case)
    except (PlaywrightError, IsolatedScriptError, ToolFailure) as exc:
        # Never the exception's text: a page error could quote what was typed.
        log.info("secure entry failed", extra={"tab_id": tab.id, "error": type(exc).__name__})
        return takeover(context, tab, _NOT_ENTERED)
    except Exception:
        if protection is not None:
            _request_takeover(context, tab, _NOT_ENTERED)
        raise
    assert done.value is not None
    return done.value
