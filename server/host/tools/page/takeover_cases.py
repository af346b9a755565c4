"""What only a person settles, found by the host so that the agent does not guess.

Each case has a stable code, which the agent's result and ``browser-takeover-requested``
carry with a reason a person reads:

* ``crossOriginFrame``: fields of a login or a card inside a frame of another site, which
  the tools' scripts cannot reach (found by secure entry as it resolves the fields);
* ``passkey``: the page asked for a passkey (``browser.passkeys`` watches the WebAuthn API);
* ``accountChoice``: an account chooser listing several accounts (an OAuth sign-in that
  asks which account goes on);
* ``paymentConfirmation``: a 3-D Secure challenge (its frame or the form that posts to
  one), or a card filled from the vault, whose payment only a person confirms;
* ``captcha``: a bot check only a person passes (``challenge``'s ``needs-user``: a puzzle,
  a vendor's interactive page, a check the one offered click did not pass).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from server.host.browser.passkeys import prompt_in
from server.host.browser.per_tab import PerTab
from server.host.browser.tabs import Tab
from server.host.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.tools.context import ToolContext
from server.host.tools.page.challenge import person_check
from server.host.tools.page.tab_access import announce_takeover, holds_secret

TakeoverCode = Literal[
    "crossOriginFrame", "passkey", "accountChoice", "paymentConfirmation", "captcha", "entryFailed"
]
# The address of a 3-D Secure challenge frame (found through the browser, so a frame in a
# closed shadow root counts too); takeover-signs.js reads names and forms.
_THREE_DS_FRAME = re.compile(
    r"3-?d-?s(ecure)?|three-?d-?s|cardinalcommerce|(^|[/._-])acs([/._-]|$)", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class TakeoverCase:
    """Why a person takes the tab: a code for programs and a reason for the person."""

    code: TakeoverCode
    reason: str


CROSS_ORIGIN_FRAME = TakeoverCase(
    "crossOriginFrame", "the fields are inside a frame of another site"
)
PAYMENT = TakeoverCase("paymentConfirmation", "confirm the payment (a person's decision)")


async def find_case(tab: Tab, page: Page, *, captcha: bool = True) -> TakeoverCase | None:
    """The case on the tab's page that a person must settle, or None. Reads the page in the
    tools' isolated world; a page between documents reads as none. ``captcha=False`` leaves
    bot checks to a read of ``challenge`` the caller made."""
    found = await _read_case(tab, page, captcha=captcha)
    return found[1] if found is not None else None


async def _read_case(
    tab: Tab, page: Page, *, captcha: bool
) -> tuple[float, TakeoverCase | None] | None:
    """The page's document and its case; None for a page between documents."""
    try:
        document = float(await evaluate_isolated(page, "document-id"))
        signs = await evaluate_isolated(page, "takeover-signs")
    except (PlaywrightError, IsolatedScriptError):
        return None
    prompt = prompt_in(tab, document)
    if prompt is not None:
        asked = "sign in with" if prompt.ceremony == "get" else "create"
        return document, TakeoverCase("passkey", f"the page asks to {asked} a passkey")
    if signs["payment"] or any(
        _THREE_DS_FRAME.search(frame.url) for frame in page.frames if frame is not page.main_frame
    ):
        return document, TakeoverCase("paymentConfirmation", "the bank asks to confirm the payment")
    if signs["accountChoice"]:
        count = int(signs["accounts"])
        reason = f"choose which of {count} accounts to continue with"
        return document, TakeoverCase("accountChoice", reason)
    vendor = await person_check(page) if captcha else None
    if vendor is not None:
        return document, TakeoverCase("captcha", f"a person must pass the {vendor} check")
    return document, None


# The document and case the host last asked a person to take over for.
_ASKED: PerTab[tuple[float, str]] = PerTab("takeoverAsked")
_NEXT = (
    "A person was asked to take this tab over. Stop working in it until they hand it back, "
    "then take a snapshot. Do not try to get around it."
)


async def takeover_for_snapshot(
    context: ToolContext, tab: Tab, page: Page, challenge: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The ``takeover`` field of a snapshot: a case on the page only a person settles, asked
    for by the host itself once per document and case (the agent is told, not asked)."""
    if holds_secret(tab):
        return None  # secure entry reads its own cases; no script of ours reads this tab
    found = await _read_case(tab, page, captcha=False)
    if found is None:
        return None
    document, case = found
    if case is None and challenge is not None and challenge.get("status") == "needs-user":
        case = TakeoverCase("captcha", f"a person must pass the {challenge['vendor']} check")
    if case is None:
        return None
    asked = (document, case.code)
    if _ASKED.get(tab) != asked and tab.held_by is None:
        _ASKED.set(tab, asked)
        announce_takeover(context, tab, case.reason, case.code)
    return {"code": case.code, "reason": case.reason, "next": _NEXT}
