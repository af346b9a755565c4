"""Addresses a team saves for the host to reach over HTTP (a model provider's, a SearXNG
instance's), judged by the public-address policy: when saved, and for a name at every
connection its session opens, so a name that answers another address later is judged
anew. A name that does not resolve yet is judged only when it is dialed."""

from __future__ import annotations

import socket

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from server.common.browser_address_policy import IPAddress, normalize_host
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    resolve_pinned,
    system_resolve,
)


async def judge_saved_url(url: str, policy: PublicOnlyPolicy, resolver: Resolver) -> None:
    """Raise ``NonPublicAddress`` when ``url``'s host is, or resolves to, an address the
    policy refuses; a name that does not resolve passes (its connection judges it)."""
    parsed = URL(url)
    port = parsed.explicit_port or (443 if parsed.scheme == "https" else 80)
    try:
        await resolve_pinned(normalize_host(parsed.raw_host or ""), port, policy, resolver=resolver)
    except NameNotResolved:
        return


def resolve_result(host: str, port: int, address: IPAddress) -> ResolveResult:
    """The one answer a pinning resolver gives aiohttp: ``host`` is at ``address``."""
    return {
        "hostname": host,
        "host": str(address),
        "port": port,
        "family": socket.AF_INET6 if address.version == 6 else socket.AF_INET,
        "proto": 0,
        "flags": socket.AI_NUMERICHOST,
    }


def policy_session(
    policy: PublicOnlyPolicy | None, resolver: Resolver = system_resolve
) -> aiohttp.ClientSession:
    """A client session that dials only what ``policy`` permits (None: anything)."""
    if policy is None:
        return aiohttp.ClientSession()
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(resolver=PolicyResolver(policy, resolver))
    )


class PolicyResolver(AbstractResolver):
    """A session's resolver that answers only with an address the policy permits; any
    other is refused as the connection opens."""

    def __init__(self, policy: PublicOnlyPolicy, resolver: Resolver = system_resolve) -> None:
        self._policy = policy
        self._resolver = resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            address = await resolve_pinned(host, port, self._policy, resolver=self._resolver)
        except (NonPublicAddress, NameNotResolved) as refused:
            raise OSError(refused.message) from None
        return [resolve_result(host, port, address)]

    async def close(self) -> None:
        return None
