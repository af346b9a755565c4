"""The refusals of the safety contract, decided from an element's facts alone.

Each check runs on what ``targets.inspect`` read, before anything that could
change the page, and raises ``ToolFailure`` with a stable code. A commit action
(submit, pay, send, ...) and a button that would submit a form are for a person.
A click or an activating key is judged by what it would activate (the button
around the span clicked, a label's control) as well as by the element aimed at.
"""

from __future__ import annotations

import re
from typing import Any

from server.host.tools.results import ToolFailure

COMMIT_WORDS = re.compile(
    r"\b(submit|commit|place\s+(?:the\s+|my\s+|your\s+)?order|check\s*out|pay|purchase|send|confirm)\b",
    re.IGNORECASE,
)
ENTER_KEYS = frozenset({"Enter", "NumpadEnter"})
ACTIVATE_KEYS = frozenset({"Enter", "NumpadEnter", " ", "Space"})
# What Playwright also presses as Enter.
_KEY_ALIASES = {"\n": "Enter", "\r": "Enter"}
DASHES = {"\u2014": "an em dash", "\u2013": "an en dash"}
# fill_fields accepts only these plain text fields (besides textarea).
FILLABLE_TYPES = frozenset({"text", "search", "tel", "url", "email"})
_SECRET_AUTOCOMPLETE = ("one-time-code", "cc-", "current-password", "new-password")


def _what(facts: dict[str, Any]) -> str:
    name = facts.get("name") or facts.get("text") or ""
    kind = facts.get("role") or str(facts.get("tag", "element")).lower()
    return f'{kind} "{name}"' if name else str(kind)


def refuse_gone(facts: dict[str, Any]) -> None:
    if not facts.get("connected", False):
        raise ToolFailure("staleRef", "the target is no longer on the page; take a new snapshot")


def refuse_disabled(facts: dict[str, Any]) -> None:
    if facts.get("disabled"):
        raise ToolFailure("targetDisabled", f"the {_what(facts)} is disabled")


def refuse_read_only(facts: dict[str, Any]) -> None:
    if facts.get("readOnly"):
        raise ToolFailure("targetReadOnly", f"the {_what(facts)} is read-only")


def refuse_password(facts: dict[str, Any]) -> None:
    if facts.get("password"):
        raise ToolFailure(
            "passwordField",
            "this is a password field: agents never type into one; ask a person "
            "(request_takeover) to enter it",
        )


def refuse_commit(facts: dict[str, Any]) -> None:
    """A control whose text reads like a commit action, or that would submit its form."""
    words = f"{facts.get('name') or ''} {facts.get('text') or ''}"
    match = COMMIT_WORDS.search(words)
    if match is not None:
        raise ToolFailure(
            "gatedAction",
            f"the {_what(facts)} reads like a commit action ({match.group(0).lower()}): "
            "a person must do this step; say what is ready and ask them",
        )
    if facts.get("submitsForm"):
        raise ToolFailure(
            "gatedAction",
            f"the {_what(facts)} would submit a form: a person must do this step; "
            "say what is filled in and ask them",
        )


def refuse_submit(facts: dict[str, Any]) -> None:
    """A click on the element, or on what it activates, would submit a form (a switch
    that is a form's button; a checkbox drawn inside a submit button)."""
    for element in judged(facts):
        if element.get("submitsForm"):
            raise ToolFailure(
                "gatedAction",
                f"clicking the {_what(facts)} would submit a form: a person must do this "
                "step; say what is filled in and ask them",
            )


def refuse_hidden(facts: dict[str, Any]) -> None:
    if not facts.get("visible", True):
        raise ToolFailure(
            "targetHidden", f"the {_what(facts)} is not visible; scroll or open what holds it"
        )


def judged(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """The element aimed at and, when they differ, the control a click on it activates and
    the native control the browser activates beneath it (a drawn checkbox inside a submit
    button submits the form)."""
    return [facts, *(facts[k] for k in ("activation", "nativeActivation") if facts.get(k))]


def check_clickable(facts: dict[str, Any]) -> None:
    """Everything a click is refused for, on the element and on what it activates."""
    refuse_gone(facts)
    for element in judged(facts):
        refuse_disabled(element)
        refuse_password(element)
        if not element.get("textInput"):
            refuse_commit(element)  # a text field's value is what someone typed, not its action


def check_key(key: str, facts: dict[str, Any]) -> None:
    """Refuses a key that would submit a form or press a commit control.

    Enter submits a form from more than text fields (see ``enterSubmits`` in
    ``lib/activation.js``); Enter or Space on a button or link presses it like a click.
    Every key of a chord counts (``Enter+Shift`` presses Enter first), and so does each
    name Playwright gives Enter (a newline, a carriage return).
    """
    keys = chord_keys(key)
    refuse_password(facts)
    if keys & ACTIVATE_KEYS and facts.get("iframe"):
        # Focus is in a frame of another origin: what Enter or Space does there is unknown.
        raise ToolFailure(
            "gatedAction",
            "focus is inside a frame of another site that cannot be checked: Enter or Space "
            "there could submit a form; a person must do this step",
        )
    if keys & ENTER_KEYS and facts.get("enterSubmits"):
        raise ToolFailure(
            "gatedAction", "Enter here would submit the form: a person must do this step"
        )
    if keys & ACTIVATE_KEYS and not facts.get("textInput"):
        for element in judged(facts):
            refuse_disabled(element)
            refuse_commit(element)


def chord_keys(key: str) -> frozenset[str]:
    """The keys a ``press`` of ``key`` presses, as Playwright reads it (``Shift+Enter``,
    ``Control++``), with Enter's other names (``\n``, ``\r``) as ``Enter``."""
    keys = {_KEY_ALIASES.get(part, part) for part in key.split("+") if part}
    if key.endswith("+"):  # "Control++", "+": the plus key itself
        keys.add("+")
    return frozenset(keys)


def check_text(text: str) -> None:
    """Text an agent may type: not empty, and no em or en dash (a model's tell in an answer)."""
    if not text:
        raise ToolFailure("emptyText", "the text is empty")
    for dash, name in DASHES.items():
        if dash in text:
            raise ToolFailure(
                "dashInText", f"the text contains {name}; write it with a hyphen or a comma"
            )


def refuse_secret(facts: dict[str, Any]) -> None:
    """A field the page marks as a one-time code or card data: a person enters those."""
    autocomplete = str(facts.get("autocomplete", ""))
    if any(token in autocomplete for token in _SECRET_AUTOCOMPLETE):
        raise ToolFailure(
            "secretField",
            f"the {_what(facts)} takes a secret ({autocomplete}): agents never type one; ask a "
            "person (request_takeover) to enter it",
        )


def check_typable(facts: dict[str, Any], text: str, *, append: bool) -> None:
    """Everything typing ``text`` into the target is refused for."""
    refuse_gone(facts)
    if not (facts.get("textInput") or facts.get("contentEditable")):
        raise ToolFailure("notEditable", f"the {_what(facts)} is not a text field")
    refuse_password(facts)
    refuse_secret(facts)
    refuse_disabled(facts)
    refuse_read_only(facts)
    check_text(text)
    limit = int(facts.get("maxLength", -1))
    length = len(text.encode("utf-16-le")) // 2  # the page counts UTF-16 units
    if append:
        length += int(facts.get("valueLength", 0))
    if limit >= 0 and length > limit:
        raise ToolFailure(
            "textTooLong",
            f"the field takes at most {limit} characters and the text would make it {length}; "
            "shorten it rather than let the page cut it",
        )


def check_fillable(facts: dict[str, Any]) -> str | None:
    """Why ``fill_fields`` refuses this field (a reason code), or None when it may fill it."""
    if not facts.get("connected"):
        return "targetGone"
    if facts.get("frameDepth", 0) > 0:
        return "inFrame"
    if facts.get("password"):
        return "passwordField"
    autocomplete = str(facts.get("autocomplete", ""))
    if any(token in autocomplete for token in _SECRET_AUTOCOMPLETE):
        return "secretField"
    if facts.get("contentEditable"):
        return "notNativeField"
    if not (facts.get("tag") == "TEXTAREA" or facts.get("type") in FILLABLE_TYPES):
        return "notTextField"
    if not facts.get("visible"):
        return "targetHidden"
    if facts.get("disabled"):
        return "targetDisabled"
    if facts.get("readOnly"):
        return "targetReadOnly"
    return None
