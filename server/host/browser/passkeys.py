"""Passkey prompts: which document of a tab asked for a passkey, so a person takes over.

A passkey (WebAuthn) is a person's: the host never answers one, and an agent that meets a
prompt only waits or guesses. Every document of a tab's page gets ``passkey-watch.js`` in
its main world, which reports a ``navigator.credentials.get`` or ``create`` with
``publicKey`` options (not a conditional, autofill request) through a CDP binding; the
report is kept on the tab with the document it came from. The page could call the binding
itself, which only sends a person; it cannot make a call through the API unreported.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Literal

from playwright.async_api import CDPSession

from server.host.browser.page_facts import report_object
from server.host.browser.per_tab import PerTab
from server.host.browser.tabs import Tab
from server.host.page.scripts import page_script

BINDING = "__crewhostPasskey"
_MAX_REPORT = 200


@dataclass(frozen=True, slots=True)
class PasskeyPrompt:
    """A document's request for a passkey: sign in with one (``get``) or make one."""

    document: float  # the asking document's performance.timeOrigin (a frame's own)
    ceremony: Literal["get", "create"]


# The newest passkey prompt the tab's page made.
PROMPT: PerTab[PasskeyPrompt] = PerTab("passkey")


async def install(session: CDPSession) -> None:
    """Puts the watch on every new document of the session's page (main world); the caller
    passes ``Runtime.bindingCalled`` for ``BINDING`` to ``record``."""
    source = f"({page_script('passkey-watch')})({json.dumps(BINDING)})"
    # Sent at once and run in order (the binding first): one wait.
    await asyncio.gather(
        session.send("Runtime.addBinding", {"name": BINDING}),
        session.send("Page.addScriptToEvaluateOnNewDocument", {"source": source}),
    )


def record(tab: Tab, payload: object) -> PasskeyPrompt | None:
    """Keeps the prompt a report names on the tab; None for a payload that is not one."""
    raw = report_object(payload, _MAX_REPORT)
    if raw is None:
        return None
    ceremony, document = raw.get("ceremony"), raw.get("document")
    if ceremony not in ("get", "create") or not isinstance(document, int | float):
        return None
    prompt = PasskeyPrompt(float(document), "get" if ceremony == "get" else "create")
    PROMPT.set(tab, prompt)
    return prompt


def prompt_in(tab: Tab, document: float) -> PasskeyPrompt | None:
    """The passkey prompt made by the tab's main document ``document`` (its
    ``performance.timeOrigin``) or a frame of it: a frame's document begins after its
    parent's, a document the tab has left began before."""
    prompt = PROMPT.get(tab)
    if prompt is not None and prompt.document >= document:
        return prompt
    return None
