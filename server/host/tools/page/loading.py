"""Loading an address into a tab for ``open`` and ``navigate``, and the snapshot they return.

Both take what a person would type into an address bar and return the page's
snapshot, so the agent reads the page it came for in the same call. Every new
document of an agent's tab is watched for cookie banners from the moment the tab
exists.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from playwright.async_api import Error as PlaywrightError
from pydantic import StringConstraints

from server.common.browser_address_policy import AddressRefused
from server.common.errors import CrewhostError
from server.host.browser.pages import LoadWait
from server.host.browser.partitions import Partition
from server.host.browser.proxied import ProxyPageError
from server.host.browser.tabs import BLANK, Tab
from server.host.tools.context import ToolContext
from server.host.tools.page.address import ResolvedAddress
from server.host.tools.page.consent import take_refusals, watch_consent
from server.host.tools.page.snapshots import take_snapshot
from server.host.tools.results import ToolFailure

_NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")


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


async def partition_for(context: ToolContext) -> Partition:
    agent_id = context.caller.agent_id
    if agent_id is None or context.partition_for_agent is None:
        return Partition.shared()
    return await context.partition_for_agent(context.team_id, agent_id)


# What every tool that loads a typed address says it refuses.
REFUSED_ADDRESSES = (
    "Addresses of other apps (mailto:, tel:) and of the browser itself (file:, chrome:, "
    "javascript:, data:) are refused."
)


async def new_blank_tab(context: ToolContext) -> Tab:
    """A new blank tab of the calling agent, in its partition."""
    return await context.engine.open_tab(
        context.team_id,
        await partition_for(context),
        url=BLANK,
        owner_agent_id=context.caller.agent_id,
        owner_thread_id=context.caller.thread_id,
    )


async def load(
    context: ToolContext, tab: Tab, address: ResolvedAddress, *, wait_until: LoadWait = "load"
) -> None:
    watch_consent(context, tab)
    try:
        await context.engine.navigate(
            context.team_id, tab.id, context.caller, address.url, wait_until=wait_until
        )
    except PlaywrightError as exc:
        raise _load_failure(exc) from None
    except AddressRefused as refused:
        # Not a failure to retry: the host refuses the address (or a redirect's) itself.
        raise ToolFailure("addressRefused", refused.message, rule=refused.rule) from None
    except ProxyPageError as failed:
        raise ToolFailure(failed.code, failed.message) from None
    # The load may have replaced the page (a crashed renderer reloads); watch the new one.
    watch_consent(context, tab)


async def snapshot_of(
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
