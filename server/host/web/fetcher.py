"""Fetching one web address for an agent, under the public-only address policy.

Every hop of a redirect chain is vetted before it is dialed: its host is resolved once
(``resolve_pinned``), every address it resolved to must be public (or allowed by the
host's setting), and the connection goes to that vetted address, so a name cannot answer
one address to the check and another to the dial. Redirects are followed here, not by
aiohttp, for that reason. The download is capped; a body past the cap is cut, and says so.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from server.common.browser_address_policy import IPAddress, normalize_host
from server.common.errors import CrewhostError, InvalidArgument
from server.common.public_addresses import (
    PublicOnlyPolicy,
    Resolver,
    parse_host_address,
    resolve_pinned,
    system_resolve,
)
from server.host.web.dial_policy import resolve_result

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_USER_AGENT = "Mozilla/5.0 (compatible; Crewhost web_fetch)"
_ACCEPT = "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5"


class FetchFailed(CrewhostError):
    """The address could not be fetched: it timed out, refused, or answered nonsense."""

    status = 502
    code = "fetchFailed"


class ProxyFailed(FetchFailed):
    """The proxy a fetch went through could not be used: it did not answer
    (``proxy_status`` None) or it refused to open a tunnel, answering ``proxy_status``.
    Whoever set the proxy up says what that means for its users."""

    def __init__(self, message: str, proxy_status: int | None) -> None:
        super().__init__(message)
        self.proxy_status = proxy_status


@dataclass(frozen=True)
class FetchLimits:
    """How long a fetch may take, how much it may download, how many redirects it follows."""

    timeout: float = 30.0
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 10


@dataclass(frozen=True)
class FetchedPage:
    """One fetched response: where it ended, what it is, and its (possibly cut) body."""

    url: str
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    cut: bool
    # The last answer's headers, one value per name in lower case: a proxy's answer is
    # read by them.
    headers: Mapping[str, str] = field(default_factory=dict)


class PinnedResolver(AbstractResolver):
    """Answers only for hosts that were vetted for this fetch, with their vetted address."""

    def __init__(self) -> None:
        self.pinned: dict[str, IPAddress] = {}

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        address = self.pinned.get(normalize_host(host))
        if address is None:
            raise OSError(f"{host} was not vetted for this fetch")
        return [resolve_result(host, port, address)]

    async def close(self) -> None:
        self.pinned.clear()


@dataclass
class WebFetcher:
    """Fetches addresses for agents; ``policy`` says what may be dialed, ``resolver`` how
    names are resolved (tests inject one)."""

    policy: PublicOnlyPolicy = field(default_factory=PublicOnlyPolicy)
    limits: FetchLimits = field(default_factory=FetchLimits)
    resolver: Resolver = system_resolve

    async def fetch(self, url: str, *, proxy: str | None = None) -> FetchedPage:
        """GET ``url`` following vetted redirects.

        ``proxy`` (an ``http://`` proxy address) is where a profile's proxy plugs in: the
        target is still vetted here, and the proxy's own address is dialed as configured.
        Raises ``AddressRefused`` for a refused hop, ``FetchFailed`` otherwise.
        """
        start = _parse(url)
        try:
            async with asyncio.timeout(self.limits.timeout):
                return await self._follow(start, proxy)
        except TimeoutError:
            raise FetchFailed(
                f"{url} did not answer within {self.limits.timeout:g} s", code="fetchTimeout"
            ) from None

    async def _follow(self, start: URL, proxy: str | None) -> FetchedPage:
        pinned = PinnedResolver()
        if proxy is not None:
            await self._pin_proxy(pinned, URL(proxy))
        connector = aiohttp.TCPConnector(resolver=pinned, use_dns_cache=False)
        headers = {"User-Agent": _USER_AGENT, "Accept": _ACCEPT}
        async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
            current = start
            for _hop in range(self.limits.max_redirects + 1):
                await self._vet(pinned, current)
                try:
                    async with session.get(
                        current, allow_redirects=False, proxy=proxy, auto_decompress=True
                    ) as response:
                        location = response.headers.get("Location")
                        if response.status in _REDIRECTS and location:
                            current = _redirect_target(current, location)
                            continue
                        body, cut = await self._read(response)
                        return FetchedPage(
                            url=str(start),
                            final_url=str(current),
                            status=response.status,
                            content_type=response.content_type,
                            charset=response.charset,
                            body=body,
                            cut=cut,
                            headers={k.lower(): v for k, v in response.headers.items()},
                        )
                except aiohttp.ClientProxyConnectionError as error:
                    raise ProxyFailed(f"the proxy did not answer: {_reason(error)}", None) from None
                except aiohttp.ClientHttpProxyError as error:
                    raise ProxyFailed(
                        f"the proxy answered {error.status} to a tunnel to {current.host}",
                        error.status,
                    ) from None
                except aiohttp.ClientError as error:
                    raise FetchFailed(f"{current} could not be fetched: {_reason(error)}") from None
        raise FetchFailed(
            f"{start} redirected more than {self.limits.max_redirects} times",
            code="tooManyRedirects",
        )

    async def _vet(self, pinned: PinnedResolver, url: URL) -> None:
        host = normalize_host(url.raw_host or "")
        port = url.explicit_port or (443 if url.scheme == "https" else 80)
        address = await resolve_pinned(host, port, self.policy, resolver=self.resolver)
        # A host seen twice in one chain keeps its first vetted address.
        pinned.pinned.setdefault(host, address)

    async def _pin_proxy(self, pinned: PinnedResolver, proxy: URL) -> None:
        # The proxy is the host's own configuration (often a loopback relay): not vetted.
        host = normalize_host(proxy.raw_host or "")
        literal = parse_host_address(host)
        pinned.pinned[host] = literal or (await self.resolver(host, proxy.port or 80))[0]

    async def _read(self, response: aiohttp.ClientResponse) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_chunked(64 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > self.limits.max_bytes:
                return b"".join(chunks)[: self.limits.max_bytes], True
        return b"".join(chunks), False


def _parse(url: str, *, redirect: bool = False) -> URL:
    where = "a redirect" if redirect else "url"
    try:
        parsed = URL(url.strip())
    except ValueError:
        raise InvalidArgument(f"{where} {url!r} is not a web address", code="invalidUrl") from None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        raise InvalidArgument(
            f"{where} must be an http or https address with a host, not {url!r}",
            code="invalidUrl",
        )
    return parsed.with_fragment(None)


def _redirect_target(current: URL, location: str) -> URL:
    # A Location that is no address at all is the server answering nonsense, not a bad url.
    try:
        target = current.join(URL(location))
    except ValueError:
        raise FetchFailed(
            f"{current} redirected to {location[:200]!r}, which is not a web address"
        ) from None
    return _parse(str(target), redirect=True)


def _reason(error: aiohttp.ClientError) -> str:
    # An SSL or connection error's text names the address and the cause; nothing secret.
    reason: Any = getattr(error, "os_error", None) or error
    return str(reason) or type(error).__name__
