"""What a person approved of a gated call: the elements its card named, held to when it acts.

A card names an element as the page gives it when the card is made (``Click “Keep my
data”``), and the page may change before the person answers. For a call that asks, the
agent runtime makes an ``Approval``; describing the call records, for each target the card
named, which element that was (its pick in the tools' world, its role and the name the card
showed), and the call carries the approval to its run. There the action refuses
(``targetChanged``) when its target now resolves to another element, or to one with another
role or name. A call nobody was asked about carries no approval and acts on what its target
resolves to.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from server.host.tools.args import Target
from server.host.tools.page.targets import Resolved, run_on_element
from server.host.tools.results import ToolFailure


@dataclass(frozen=True)
class ApprovedElement:
    """One element a card named: its pick (None: the card could not name one), role and
    shown name."""

    pick: str | None
    role: str
    name: str


# What a card shows for a target it could not resolve: any element the act finds is another.
_UNNAMED = ApprovedElement(None, "", "")


@dataclass
class Approval:
    """The elements the card of one asked call named, by the target that named each."""

    elements: dict[Target, ApprovedElement] = field(default_factory=dict)


# The approval of the call being described or run (set by the catalog around either).
_current: ContextVar[Approval | None] = ContextVar("approval", default=None)


@contextmanager
def carrying(approval: Approval | None) -> Iterator[None]:
    """Describes or runs a call with ``approval`` (None: a call nobody is asked about)."""
    token = _current.set(approval)
    try:
        yield
    finally:
        _current.reset(token)


def shown_name(facts: dict[str, Any]) -> str | None:
    """The name a card gives an element: its accessible name, or that of what a click on it
    activates, or its text."""
    activation = facts.get("activation") or {}
    for name in (facts.get("name"), activation.get("name"), facts.get("text")):
        if isinstance(name, str) and name.strip():
            return name
    return None


def _role(facts: dict[str, Any]) -> str:
    return str(facts.get("role") or facts.get("tag") or "")


def record(target: Target, pick: str | None, facts: dict[str, Any]) -> None:
    """Keeps the element a card named for ``target``, when the call being described asks."""
    approval = _current.get()
    if approval is not None:
        approval.elements[target] = ApprovedElement(pick, _role(facts), shown_name(facts) or "")


def approved_element(target: Target) -> ApprovedElement | None:
    """The element a person approved for ``target``; None for a call nobody was asked about.
    Read when the call starts (the tab's queue may run the act in another task)."""
    approval = _current.get()
    if approval is None:
        return None
    return approval.elements.get(target, _UNNAMED)


async def require_approved(
    approved: ApprovedElement | None, resolved: Resolved, facts: dict[str, Any]
) -> None:
    """Refuses (``targetChanged``) when the target now resolves to another element than the
    one the person approved, or the same one under another role or name."""
    if approved is None:
        return
    same = (
        approved.pick is not None
        and resolved.pick is not None
        and _role(facts) == approved.role
        and (shown_name(facts) or "") == approved.name
        and bool(await run_on_element(resolved, "same-element", other=approved.pick))
    )
    if not same:
        was = f"“{approved.name}”" if approved.name else "the element the card named"
        raise ToolFailure(
            "targetChanged",
            f"the page changed after the approval: {resolved.label} is no longer {was}; "
            "nothing was done; take a snapshot and look again before asking again",
        )
