"""Whether a browser proxy's own address may be used: the host's one address policy
(public-only, the host's own addresses refused) applied to the proxy, at create, at
update and at every connection to it.

A proxy is a way out for a team's browser: one at the host's loopback, a private address
or the cloud's metadata service would hand the browser what the address policy refuses
it. The proxy's host is resolved once, every address it resolved to is judged, and the
caller dials the judged address it gets back, never the name. An on-premises proxy is
let through by the setting ``host.proxy_allowed_hosts``. A member's computer is no
address and is not judged here.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from server.common.browser_address_policy import IPAddress
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    SavedAddressRefused,
    resolve_pinned,
    system_resolve,
)
from server.host.proxies.addresses import ProxyAddress

log = logging.getLogger(__name__)

# A proxy's name answers within this, or counts as not resolving.
_RESOLVE_SECONDS = 10.0


class ProxyAddressRefused(SavedAddressRefused):
    """A proxy's address is refused by the host's address policy; the message names the
    block (loopback, link-local / cloud metadata, this host's own address, …)."""

    code = "proxyAddressRefused"
    setting = "proxy_allowed_hosts"

    def __init__(self, proxy: ProxyAddress, refused: NonPublicAddress) -> None:
        super().__init__(f"the proxy {proxy.host_text}:{proxy.port}", refused, field="address")


@dataclass
class ProxyAddressJudge:
    """Judges proxy addresses; ``resolver`` answers names (a table in tests)."""

    policy: PublicOnlyPolicy = field(default_factory=PublicOnlyPolicy)
    resolver: Resolver = system_resolve

    async def pinned(self, proxy: ProxyAddress) -> IPAddress:
        """The one address to dial for ``proxy``: its host resolved once, every address
        judged. Raises ``ProxyAddressRefused``, or ``NameNotResolved``."""
        try:
            async with asyncio.timeout(_RESOLVE_SECONDS):
                return await resolve_pinned(
                    proxy.host, proxy.port, self.policy, resolver=self.resolver
                )
        except NonPublicAddress as refused:
            raise ProxyAddressRefused(proxy, refused) from None
        except TimeoutError:
            raise NameNotResolved(proxy.host) from None

    async def check(self, proxy: ProxyAddress) -> None:
        """A saved address's check: refused as ``pinned`` refuses it; a name that does not
        resolve now is saved, and judged again at every connection."""
        try:
            await self.pinned(proxy)
        except NameNotResolved:
            log.info("a proxy's host does not resolve now; it is judged again at connect")
