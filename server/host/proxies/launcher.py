"""How a partition's browser reaches its proxy: the proxy setting Chromium launches with,
and the loopback relay when Chromium cannot sign in itself.

* ``http``, with or without a sign-in: Chromium talks to the proxy; Playwright answers
  its sign-in.
* ``socks5`` without a sign-in: Chromium talks to the proxy (it sends the host name).
* ``socks5`` with a sign-in, ``https``, and a member's computer: Chromium talks to a
  loopback relay whose exit is the proxy or the member's egress channel.

A proxy's own address is judged at every launch, and by the relay at every connection
(``ProxyAddressJudge``): its host is resolved once, and Chromium or the relay is given
the judged address, never the name, so a name cannot answer one way for the check and
another for the dial. An https proxy goes through the relay because its certificate
names the proxy's host, which Chromium would then resolve itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from server.common.public_addresses import NameNotResolved
from server.host.proxies.addresses import ProxyAddress
from server.host.proxies.exits import Exit, HttpsProxyExit, Socks5Exit, Why, refuses_sign_in
from server.host.proxies.judge import ProxyAddressJudge
from server.host.proxies.marks import ProxyMarks
from server.host.proxies.plan import ProxyPlan
from server.host.proxies.relay import LoopbackRelay


@dataclass(frozen=True, slots=True)
class ProxySetting:
    """Chromium's proxy: ``server`` (``scheme://host:port``) and its sign-in, if any."""

    server: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    def url(self) -> str:
        """The proxy as one address with its sign-in in it, as HTTP clients take it."""
        if self.username is None:
            return self.server
        parts = urlsplit(self.server)
        sign_in = f"{quote(self.username, safe='')}:{quote(self.password or '', safe='')}"
        return f"{parts.scheme}://{sign_in}@{parts.netloc}"

    def playwright(self) -> dict[str, str]:
        setting = {"server": self.server}
        if self.username is not None:
            setting["username"] = self.username
            setting["password"] = self.password or ""
        return setting


@dataclass(slots=True)
class LaunchedProxy:
    """A partition's proxy while its browser runs."""

    plan: ProxyPlan
    setting: ProxySetting
    relay: LoopbackRelay | None = None

    async def stop(self) -> None:
        if self.relay is not None:
            await self.relay.close()


class ProxyLauncher:
    """Makes ``LaunchedProxy`` values; a relay's refusals mark the proxy."""

    def __init__(
        self,
        marks: ProxyMarks,
        *,
        computer_exit: Callable[[str, str], Exit] | None = None,
        connect_timeout: float = 15.0,
        judge: ProxyAddressJudge | None = None,
    ) -> None:
        self._marks = marks
        self._computer_exit = computer_exit
        self.connect_timeout = connect_timeout
        self.judge = judge or ProxyAddressJudge()

    async def start(self, plan: ProxyPlan) -> LaunchedProxy:
        if plan.kind == "computer":
            if self._computer_exit is None or plan.member_id is None:
                raise ValueError("this host carries no member's egress")
            return await self._relayed(plan, self._computer_exit(plan.team_id, plan.member_id))
        address = plan.address
        assert address is not None
        if address.scheme == "socks5" and address.username is not None:
            return await self._relayed(plan, self._socks5(address))
        if address.scheme == "https":
            exit_ = HttpsProxyExit(address, timeout=self.connect_timeout, judge=self.judge)
            return await self._relayed(plan, exit_)
        try:
            dialled = await self.judge.pinned(address)  # ProxyAddressRefused goes up
        except NameNotResolved as exc:
            raise ConnectionError(f"proxy host {address.host} does not resolve") from exc
        server = ProxyAddress(address.scheme, str(dialled), address.port).server()
        password = address.password if address.password is not None else ""
        return LaunchedProxy(plan, ProxySetting(server, address.username, password))

    async def start_http(self, plan: ProxyPlan) -> LaunchedProxy:
        """The proxy for an HTTP client other than Chromium (``web_fetch``): an http(s)
        proxy as it is; SOCKS5, with a sign-in or not, and a member's computer through a
        loopback relay, since such clients speak only HTTP to a proxy."""
        address = plan.address
        if plan.kind == "address" and address is not None and address.scheme == "socks5":
            return await self._relayed(plan, self._socks5(address))
        return await self.start(plan)

    async def refuses_sign_in(self, launched: LaunchedProxy, url: str) -> bool:
        """Whether the proxy Chromium signs in to itself (an http proxy with a user) refuses
        that sign-in now. A load asked for a sign-in and failed, or showed a 401 page, and
        a site's own sign-in does the same: the proxy is asked (``exits.refuses_sign_in``)
        for the load's site. A relay signs in to its exit itself, and marks it when refused."""
        address = launched.plan.address
        if launched.relay is not None or address is None or address.username is None:
            return False
        parts = urlsplit(url)
        if parts.hostname is None:
            return False
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        return await refuses_sign_in(
            address, self.judge, self.connect_timeout, parts.hostname, port
        )

    def _socks5(self, address: ProxyAddress) -> Socks5Exit:
        return Socks5Exit(address, timeout=self.connect_timeout, judge=self.judge)

    async def _relayed(self, plan: ProxyPlan, exit_: Exit) -> LaunchedProxy:
        def refused(why: Why) -> None:
            if why in ("unreachable", "signIn"):
                self._marks.record(plan.team_id, plan.proxy_id, why)

        relay = await LoopbackRelay(exit_, refused).__aenter__()
        setting = ProxySetting(relay.server, relay.username, relay.password)
        return LaunchedProxy(plan, setting, relay)
