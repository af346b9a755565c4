"""Partitions behind a proxy: their launch settings, their relays, and what a load through
them says about the proxy.

A named profile with a proxy gets its own Chromium launched with that proxy as its only
way out; there is no direct fallback: when the proxy cannot be set up the tab does not
open. Such a Chromium runs without the host's address guard (its PAC script would replace
the proxy, and its resolver rules would catch a proxy on loopback): every request,
loopback and private targets included, goes through the proxy and the proxy decides. A
member's computer refuses all but public addresses itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from urllib.parse import urlsplit

from server.common.errors import Unavailable
from server.host.browser.partitions import Partition
from server.host.proxies.exits import TARGET_CAUSES, Why
from server.host.proxies.launcher import LaunchedProxy, ProxyLauncher
from server.host.proxies.marks import ProxyMarks
from server.host.proxies.plan import ProxyPlan

log = logging.getLogger(__name__)

ProxyPlans = Callable[[str, str], Awaitable[ProxyPlan | None]]

# Chromium's names for a failure to reach or use the proxy itself.
_PROXY_ERRORS = frozenset(
    {
        "ERR_PROXY_CONNECTION_FAILED",
        "ERR_TUNNEL_CONNECTION_FAILED",
        "ERR_SOCKS_CONNECTION_FAILED",
        "ERR_PROXY_CERTIFICATE_INVALID",
        "ERR_NO_SUPPORTED_PROXIES",
        "ERR_PROXY_AUTH_UNSUPPORTED",
        "ERR_PROXY_AUTH_REQUESTED",
        "ERR_MANDATORY_PROXY_CONFIGURATION_FAILED",
        "ERR_CONNECTION_REFUSED",
        "ERR_CONNECTION_RESET",
        "ERR_CONNECTION_CLOSED",
        "ERR_EMPTY_RESPONSE",
        "ERR_TIMED_OUT",
        "ERR_CONNECTION_TIMED_OUT",
        "ERR_ADDRESS_UNREACHABLE",
    }
)
_SIGN_IN_ERRORS = frozenset({"ERR_PROXY_AUTH_UNSUPPORTED", "ERR_PROXY_AUTH_REQUESTED"})
# The full browser's end of a sign-in it could not give: the proxy's, or the site's own.
_SIGN_IN_FAILED = "ERR_INVALID_AUTH_CREDENTIALS"
REFUSAL_HEADER = "x-proxy-refusal"
CAUSE_HEADER = "x-proxy-refusal-cause"
# How a member's computer's refusal of a site reads, after "refused <site>: ".
_CAUSE_WORDS: dict[str, str] = {
    "policy": "not a public address, and a member's computer reaches only public ones",
    "unresolved": "the name does not resolve there",
    "unreachable": "it did not answer there",
    "busy": "the computer has too many connections open",
}


class ProxyPageError(Unavailable):
    """A page of a proxied partition did not load because of its proxy: the load's error,
    as a network error is (an agent's ``open`` still gets the tab it made)."""


async def _automatic(_team_id: str, _profile_id: str) -> ProxyPlan | None:
    return None


class ProxiedPartitions:
    """The proxies of the partitions whose browser runs now, and their marks."""

    def __init__(self, launcher: ProxyLauncher, marks: ProxyMarks) -> None:
        self.launcher = launcher
        self.marks = marks
        self.plans: ProxyPlans = _automatic
        self._running: dict[tuple[str, Partition], LaunchedProxy] = {}

    async def launch(self, team_id: str, partition: Partition) -> LaunchedProxy | None:
        """The partition's proxy, set up for a launch; None is Automatic. A proxy that
        cannot be set up is an error: the tab does not open."""
        if partition.kind != "profile":
            return None  # shared, "only this agent" and private tabs are always Automatic
        plan = await self.plans(team_id, partition.key)
        if plan is None:
            return None
        try:
            launched = await self.launcher.start(plan)
        except (OSError, ValueError) as exc:
            raise _page_error(plan, "offline" if plan.kind == "computer" else "unreachable") from (
                exc
            )
        self._running[(team_id, partition)] = launched
        return launched

    async def stopped(self, team_id: str, partition: Partition) -> None:
        """The partition's browser closed: its relay and connections end."""
        launched = self._running.pop((team_id, partition), None)
        if launched is not None:
            await launched.stop()

    async def stop_all(self) -> None:
        for key in list(self._running):
            await self.stopped(*key)

    async def loaded(
        self,
        team_id: str,
        partition: Partition,
        url: str,
        status: int,
        headers: Mapping[str, str],
    ) -> None:
        """A main-frame answer for ``url`` came through the partition's proxy: a 407, a
        401 that was the proxy's refusal of its sign-in (tinyproxy's answer to a wrong
        password, which the headless shell shows as a page), or a relay's refusal is the
        page's error (the relay's 502 page is no page), and marks the proxy unless the
        proxy only could not reach the site; anything else clears the mark."""
        launched = self._running.get((team_id, partition))
        if launched is not None:
            await self.answered(launched, url, status, headers)

    async def answered(
        self, launched: LaunchedProxy, url: str, status: int, headers: Mapping[str, str]
    ) -> None:
        """What an answer for ``url`` through ``launched`` says of its proxy, as ``loaded``
        reads it: a page error raised, the proxy's mark set or cleared."""
        refusal = headers.get(REFUSAL_HEADER)
        why: Why | None = None
        if status == 407 or (status == 401 and await self.launcher.refuses_sign_in(launched, url)):
            why = "signIn"
        elif status == 502 and refusal in ("unreachable", "signIn", "offline", "target"):
            why = refusal  # type: ignore[assignment]
        self._mark(launched, why)
        if why == "target":
            cause = headers.get(CAUSE_HEADER)
            raise _target_error(launched.plan, url, cause if cause in TARGET_CAUSES else None)
        if why is not None:
            raise _page_error(launched.plan, why)

    async def refused(
        self, launched: LaunchedProxy, url: str, proxy_status: int | None
    ) -> ProxyPageError:
        """The error of a request for ``url`` that ``launched`` would not carry: the proxy
        did not answer (``proxy_status`` None) or would not open a tunnel, answering
        ``proxy_status``. The proxy is marked as a page load through it would mark it."""
        relay = launched.relay
        why: Why
        if relay is not None and relay.last_refusal is not None:
            why = relay.last_refusal
        elif proxy_status == 407 or (
            proxy_status == 401 and await self.launcher.refuses_sign_in(launched, url)
        ):
            why = "signIn"
        elif proxy_status is None:
            why = "offline" if launched.plan.kind == "computer" else "unreachable"
        else:
            why = "target"
        self._mark(launched, why)
        if why == "target":
            return _target_error(launched.plan, url, relay.last_cause if relay else None)
        return _page_error(launched.plan, why)

    async def failed(
        self, team_id: str, partition: Partition, url: str, net_error: str | None
    ) -> None:
        """A main-frame load of ``url`` failed with Chromium's ``net_error``: when the
        proxy is the cause, the proxy is marked and the page error names it; when the
        proxy could not reach the site (a refused tunnel), the error says why. A failed
        sign-in is the proxy's only if the proxy refuses its own now: a site's request for
        one fails the same way, and is the site's error."""
        launched = self._running.get((team_id, partition))
        if launched is None or net_error is None:
            return
        if net_error == _SIGN_IN_FAILED:
            why: Why | None = None
            if await self.launcher.refuses_sign_in(launched, url):
                why = "signIn"
        else:
            why = _failure(launched, net_error)
        if why is None:
            return
        self._mark(launched, why)
        if why == "target":
            relay = launched.relay
            raise _target_error(launched.plan, url, relay.last_cause if relay else None)
        raise _page_error(launched.plan, why)

    def _mark(self, launched: LaunchedProxy, why: Why | None) -> None:
        plan = launched.plan
        if why in ("unreachable", "signIn"):
            self.marks.record(plan.team_id, plan.proxy_id, why)  # type: ignore[arg-type]
        elif why is None:
            self.marks.record(plan.team_id, plan.proxy_id, None)


def _failure(launched: LaunchedProxy, net_error: str) -> Why | None:
    relay = launched.relay
    if relay is not None and relay.last_refusal is not None and net_error in _PROXY_ERRORS:
        return relay.last_refusal
    if net_error in _SIGN_IN_ERRORS:
        return "signIn"
    if net_error == "ERR_TUNNEL_CONNECTION_FAILED" and launched.setting.username is not None:
        # Chromium reports a sign-in its handler stopped answering as a failed tunnel.
        return "signIn" if relay is None else "unreachable"
    if net_error in _PROXY_ERRORS:
        return "offline" if launched.plan.kind == "computer" else "unreachable"
    return None


def _target_error(plan: ProxyPlan, url: str, cause: str | None) -> ProxyPageError:
    """The page error of a site the proxy could not reach (``browserProxyTargetRefused``),
    naming the site and, where the exit said, why."""
    parts = urlsplit(url)
    site = f"{parts.scheme}://{parts.netloc}" if parts.netloc else url[:200]
    if plan.kind == "computer":
        words = _CAUSE_WORDS.get(cause or "", "it could not reach it")
        label = plan.name.removeprefix("computer: ")
        message = f"the page did not load: the member's computer ({label}) refused {site}: {words}"
    else:
        message = f"the page did not load: proxy {plan.name} could not reach {site}"
    return ProxyPageError(message, code="browserProxyTargetRefused")


def _page_error(plan: ProxyPlan, why: Why) -> ProxyPageError:
    if plan.kind == "computer":
        return ProxyPageError(
            f"the page did not load: {plan.name} is not reachable (is it sharing?)",
            code="browserProxyComputerUnreachable",
        )
    if why == "signIn":
        return ProxyPageError(
            f"the page did not load: proxy {plan.name} refused its sign-in",
            code="browserProxySignInRefused",
        )
    return ProxyPageError(
        f"the page did not load: proxy {plan.name} did not answer",
        code="browserProxyUnreachable",
    )
