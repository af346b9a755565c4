"""The ``set_environment`` tool: a tab's locale, time zone, viewport and colour scheme."""

from __future__ import annotations

import contextlib
import re
from typing import Annotated, Any

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import Field, StringConstraints

from server.common.time_zones import is_time_zone
from server.host.browser.identity import BrowserIdentity, language_list
from server.host.browser.per_tab import PerTab
from server.host.browser.tabs import Tab
from server.host.live.views import AGENT_VIEWPORT
from server.host.page.scripts import page_script
from server.host.tools.args import TabArgs, ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.results import ToolFailure

_LOCALE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*")


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
    if args.timezone is not None and not is_time_zone(args.timezone):
        raise ToolFailure("invalidArguments", f"{args.timezone!r} is not an IANA time zone")


# The session the tab's overrides were set on (made on first use: it is async).
_SESSION: PerTab[CDPSession] = PerTab("environment")


async def _emulation_session(tab: Tab, page: Page) -> CDPSession:
    """The session that holds the tab's overrides: they last only while it stays attached."""
    if tab.identity_session is not None:
        return tab.identity_session
    session = _SESSION.get(tab)
    if session is None:
        session = await page.context.new_cdp_session(page)
        _SESSION.set(tab, session)
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
            AGENT_VIEWPORT.set(tab, page)  # a live view of the tab leaves this size alone
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


TOOL = Tool(
    name="set_environment",
    description=(
        "Set a tab's viewport size, locale or time zone, as a site sees them. Keep the "
        "viewport stable during a sign-in."
    ),
    args=SetEnvironmentArgs,
    gated=False,
    run=set_environment,
)
