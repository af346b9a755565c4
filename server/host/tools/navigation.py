"""Tab tools: ``open``, ``navigate``, ``list_tabs``, ``close_tab``, ``handle_dialog``,
``set_environment`` and ``request_takeover``.

``open`` and ``navigate`` take what a person would type into an address bar and
return the page's snapshot, so the agent reads the page it came for in the same
call. Every new document of an agent's tab is watched for cookie banners from the
moment the tab exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import Field, StringConstraints

from server.common.addresses import AddressRefused
from server.common.errors import CrewhostError
from server.common.protocol.events import BrowserTakeoverRequested
from server.host.browser.identity import BrowserIdentity, language_list
from server.host.browser.partitions import Partition
from server.host.browser.tabs import Tab
from server.host.page.scripts import page_script
from server.host.tools.address import BLANK, ResolvedAddress, resolve_address
from server.host.tools.base import TabArgs, Tool, ToolArgs, ToolContext, ToolFailure
from server.host.tools.consent import take_refusals, watch_consent
from server.host.tools.snapshot import shown_url, take_snapshot
from server.host.tools.tab_access import reachable_tab, reachable_tabs

_NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")
_LOCALE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*")
# A title is read only from a tab that can answer at once.
_TITLE_LIMIT = 1.0

Address = Annotated[str, StringConstraints(min_length=1, max_length=8192)]


def _load_failure(exc: PlaywrightError) -> ToolFailure:
    """A load error without the page's address or the browser's call log."""
    text = str(exc)
    found = _NET_ERROR.search(text)
    if found is not None:
        return ToolFailure("navigationFailed", f"the page did not load ({found.group(1)})")
    if "Download is starting" in text:
        return ToolFailure("navigationDownload", "the address is a file download, not a page")
    return ToolFailure("navigationFailed", "the page did not load")


async def _partition_for(context: ToolContext) -> Partition:
    agent_id = context.caller.agent_id
    if agent_id is None or context.partition_for_agent is None:
        return Partition.shared()
    return await context.partition_for_agent(context.team_id, agent_id)


async def _load(context: ToolContext, tab: Tab, address: ResolvedAddress) -> None:
    watch_consent(context, tab)
    try:
        await context.engine.navigate(context.team_id, tab.id, context.caller, address.url)
    except PlaywrightError as exc:
        raise _load_failure(exc) from None
    except AddressRefused as refused:
        # Not a failure to retry: the host refuses the address (or a redirect's) itself.
        raise ToolFailure("addressRefused", refused.message, rule=refused.rule) from None
    # The load may have replaced the page (a crashed renderer reloads); watch the new one.
    watch_consent(context, tab)


async def _snapshot_of(
    context: ToolContext, tab: Tab, *, challenge_wait: float | None = None
) -> dict[str, Any]:
    """The tab's snapshot; a failed read still names the tab, with a short reason."""
    try:
        result = await take_snapshot(context, tab, challenge_wait=challenge_wait)
    except ToolFailure as failure:
        result = {"tabId": tab.id, "snapshotError": failure.message}
    except CrewhostError as exc:
        result = {"tabId": tab.id, "snapshotError": exc.message}
    except PlaywrightError:
        result = {"tabId": tab.id, "snapshotError": "the page could not be read"}
    refused = take_refusals(tab)
    if refused:
        result["cookieBannerRefused"] = refused[-1]
    return result


# -- open ------------------------------------------------------------------------------


class OpenArgs(ToolArgs):
    url: Address | None = Field(
        default=None,
        description=(
            "An address (example.com, https://example.com/a) or a search phrase, as typed "
            "into a browser's address bar. Leave it out for a blank tab."
        ),
    )


async def open_tab(context: ToolContext, args: OpenArgs) -> dict[str, Any]:
    address = None
    if args.url is not None:
        address = resolve_address(args.url, context.settings.search_url)
    tab = await context.engine.open_tab(
        context.team_id,
        await _partition_for(context),
        url=BLANK,
        owner_agent_id=context.caller.agent_id,
        owner_thread_id=context.caller.thread_id,
    )
    watch_consent(context, tab)
    if address is None:
        return {"tabId": tab.id, **await _snapshot_of(context, tab)}
    try:
        await _load(context, tab, address)
    except ToolFailure as failure:
        # The tab exists either way: say so, so the agent can use or close it.
        return {"tabId": tab.id, "url": BLANK, "loadError": failure.to_result()["error"]}
    return {"tabId": tab.id, "resolvedAs": address.kind, **await _snapshot_of(context, tab)}


# -- navigate --------------------------------------------------------------------------


class NavigateArgs(TabArgs):
    url: Address = Field(
        description=(
            "An address (example.com, https://example.com/a) or a search phrase, as typed "
            "into a browser's address bar."
        )
    )


async def navigate(context: ToolContext, args: NavigateArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    address = resolve_address(args.url, context.settings.search_url)
    await _load(context, tab, address)
    # A brief read: a bot check still running is reported as `checking`, and the rest of
    # the document's wait is left for the next snapshot.
    snapshot = await _snapshot_of(
        context, tab, challenge_wait=context.settings.navigate_challenge_wait
    )
    return {"resolvedAs": address.kind, **snapshot}


# -- list_tabs -------------------------------------------------------------------------


class ListTabsArgs(ToolArgs):
    """No arguments."""


async def _title_of(tab: Tab) -> str | None:
    page = tab.page
    if page is None or tab.dialog is not None or page.is_closed():
        return None  # a sleeping tab, or one whose dialog blocks its scripts
    try:
        async with asyncio.timeout(_TITLE_LIMIT):
            return await page.title()
    except (PlaywrightError, TimeoutError):
        return None


async def list_tabs(context: ToolContext, _args: ListTabsArgs) -> dict[str, Any]:
    tabs = []
    for tab in reachable_tabs(context):
        watch_consent(context, tab)  # a popup the agent has not seen yet
        entry: dict[str, Any] = {
            "tabId": tab.id,
            "url": shown_url(tab.url),
            "title": await _title_of(tab),
            "openerTabId": tab.opener_tab_id,
            "heldByPerson": tab.held_by is not None,
        }
        if tab.dialog is not None:
            entry["dialog"] = tab.dialog.to_wire()
        tabs.append(entry)
    return {"tabs": tabs}


# -- close_tab -------------------------------------------------------------------------


async def close_tab(context: ToolContext, args: TabArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    await context.engine.close_tab(context.team_id, tab.id, context.caller)
    return {"closed": True, "tabId": tab.id}


# -- handle_dialog ---------------------------------------------------------------------


class HandleDialogArgs(TabArgs):
    accept: bool = Field(description="true for OK, false for Cancel.")
    text: Annotated[str, StringConstraints(max_length=2000)] | None = Field(
        default=None, description="The answer to a prompt() dialog; only with accept."
    )
    dialog_id: str | None = Field(
        default=None, description="The dialog's id as the last result showed it."
    )


async def handle_dialog(context: ToolContext, args: HandleDialogArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    pending = tab.dialog
    if pending is None or (args.dialog_id is not None and args.dialog_id != pending.id):
        raise ToolFailure("dialogClosed", "this dialog is closed; take a snapshot")
    if args.text is not None and (not args.accept or pending.type != "prompt"):
        raise ToolFailure("invalidArguments", "text answers a prompt() dialog, with accept")
    await context.engine.handle_dialog(
        context.team_id, tab.id, args.accept, args.text, caller=context.caller
    )
    if tab.dialog is not None:
        return {"answered": True, "tabId": tab.id, "dialog": tab.dialog.to_wire()}
    return {
        "answered": True,
        "tabId": tab.id,
        "url": shown_url(tab.url),
        "title": await _title_of(tab),
    }


# -- set_environment -------------------------------------------------------------------


class Viewport(ToolArgs):
    width: int = Field(ge=320, le=3840)
    height: int = Field(ge=240, le=2160)


class SetEnvironmentArgs(TabArgs):
    viewport: Viewport | None = Field(default=None, description="The page's size in CSS pixels.")
    locale: Annotated[str, StringConstraints(max_length=35)] | None = Field(
        default=None, description="A language tag such as de-DE: dates, numbers, Intl."
    )
    timezone: Annotated[str, StringConstraints(max_length=64)] | None = Field(
        default=None, description="An IANA time zone such as Europe/Berlin."
    )


def _check_environment(args: SetEnvironmentArgs) -> None:
    if args.viewport is None and args.locale is None and args.timezone is None:
        raise ToolFailure("invalidArguments", "give a viewport, a locale or a timezone")
    if args.locale is not None and not _LOCALE.fullmatch(args.locale):
        raise ToolFailure("invalidArguments", f"{args.locale!r} is not a language tag")
    if args.timezone is not None:
        try:
            ZoneInfo(args.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ToolFailure(
                "invalidArguments", f"{args.timezone!r} is not an IANA time zone"
            ) from None


async def _emulation_session(tab: Tab, page: Page) -> CDPSession:
    """The session that holds the tab's overrides: they last only while it stays attached."""
    if tab.identity_session is not None:
        return tab.identity_session
    session = tab.tool_state.get("environment")
    if not isinstance(session, CDPSession):
        session = await page.context.new_cdp_session(page)
        tab.tool_state["environment"] = session
    return session


async def _set_locale(context: ToolContext, session: CDPSession, locale: str) -> None:
    """The page's languages (``navigator.languages`` and ``Accept-Language``), sent the way
    the engine's identity sends them, and its formatting locale where the browser lets it."""
    identity = BrowserIdentity(context.engine.identity.version, locale)
    await session.send(
        "Emulation.setUserAgentOverride",
        {
            "userAgent": identity.user_agent,
            "acceptLanguage": ",".join(language_list(locale)),
            "userAgentMetadata": identity.metadata(),
        },
    )
    with contextlib.suppress(PlaywrightError):
        # Refused when the context was started with a locale of its own; languages still apply.
        await session.send("Emulation.setLocaleOverride", {"locale": locale})


async def set_environment(context: ToolContext, args: SetEnvironmentArgs) -> dict[str, Any]:
    _check_environment(args)
    tab = reachable_tab(context, args.tab_id)

    async def apply(page: Page) -> dict[str, Any]:
        session = await _emulation_session(tab, page)
        if args.viewport is not None:
            await session.send(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": args.viewport.width,
                    "height": args.viewport.height,
                    "deviceScaleFactor": 0,
                    "mobile": False,
                },
            )
        if args.locale is not None:
            await _set_locale(context, session, args.locale)
        if args.timezone is not None:
            with contextlib.suppress(PlaywrightError):
                # Setting the zone the page already has is refused; the read-back decides.
                await session.send("Emulation.setTimezoneOverride", {"timezoneId": args.timezone})
        result: dict[str, Any] = await page.evaluate(page_script("environment"))
        return result

    done = await context.engine.run(context.team_id, tab.id, context.caller, apply)
    now = done.value or {}
    mismatches = []
    if args.viewport is not None and now.get("viewport") != args.viewport.model_dump():
        mismatches.append("viewport")
    if args.timezone is not None and now.get("timezone") != args.timezone:
        mismatches.append("timezone")
    if args.locale is not None and str(now.get("locale", "")).lower() != args.locale.lower():
        mismatches.append("locale")
    result: dict[str, Any] = {"ok": not mismatches, "tabId": tab.id, **now}
    if mismatches:
        result["note"] = f"MISMATCH: the page reports another {', '.join(mismatches)}"
    return result


# -- request_takeover ------------------------------------------------------------------


class RequestTakeoverArgs(TabArgs):
    reason: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)
    ] = Field(description="What the person should do in the tab, such as 'solve the captcha'.")


async def request_takeover(context: ToolContext, args: RequestTakeoverArgs) -> dict[str, Any]:
    tab = reachable_tab(context, args.tab_id)
    if tab.held_by is not None:
        return {
            "status": "held",
            "tabId": tab.id,
            "next": "A person has this tab now. When they hand it back, take a snapshot.",
        }
    if context.announce is not None:
        context.announce(
            context.team_id,
            BrowserTakeoverRequested(
                tab_id=tab.id,
                agent_id=context.caller.agent_id,
                thread_id=context.caller.thread_id,
                reason=args.reason,
            ),
        )
    return {
        "status": "requested",
        "tabId": tab.id,
        "next": (
            "Stop working in this tab and tell the user what to do there and why. A person "
            "takes the tab in the live view and hands it back; then take a snapshot."
        ),
    }


TOOLS = [
    Tool(
        name="open",
        description=(
            "Open a new tab and return its first snapshot. `url` is an address or a search "
            "phrase, as typed into a browser's address bar. Addresses of other apps "
            "(mailto:, tel:) and of the browser itself (file:, chrome:, javascript:, data:) "
            "are refused."
        ),
        args=OpenArgs,
        gated=True,
        run=open_tab,
    ),
    Tool(
        name="navigate",
        description=(
            "Load an address or a search phrase in a tab, as a browser's address bar would, "
            "and return the page's snapshot. Addresses of other apps (mailto:, tel:) and of "
            "the browser itself (file:, chrome:, javascript:, data:) are refused."
        ),
        args=NavigateArgs,
        gated=True,
        run=navigate,
    ),
    Tool(
        name="list_tabs",
        description=(
            "List your tabs: id, address, title, the tab that opened it, whether a person "
            "holds it, and any open dialog. Use it after a sign-in or a click that may open "
            "a new tab."
        ),
        args=ListTabsArgs,
        gated=False,
        run=list_tabs,
    ),
    Tool(
        name="close_tab",
        description=(
            "Close a tab (and the popups that depend on it) once the task no longer needs "
            "it. Works while a dialog is open."
        ),
        args=TabArgs,
        gated=False,
        run=close_tab,
    ),
    Tool(
        name="handle_dialog",
        description=(
            "Answer the page's alert, confirm or prompt dialog: accept (OK) or not (Cancel), "
            "with `text` for a prompt. Until it is answered no other tool works on the tab."
        ),
        args=HandleDialogArgs,
        gated=True,
        run=handle_dialog,
    ),
    Tool(
        name="set_environment",
        description=(
            "Set a tab's viewport size, locale or time zone, as a site sees them. Keep the "
            "viewport stable during a sign-in."
        ),
        args=SetEnvironmentArgs,
        gated=False,
        run=set_environment,
    ),
    Tool(
        name="request_takeover",
        description=(
            "Ask a person to take the tab, for what only a person may do: a captcha or bot "
            "check, a password, a one-time code, a passkey, a payment. Returns at once; stop "
            "working in the tab until they hand it back."
        ),
        args=RequestTakeoverArgs,
        gated=False,
        run=request_takeover,
    ),
]
