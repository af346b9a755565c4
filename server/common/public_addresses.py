"""The public-only address policy: what a fetch or an egress dial may reach.

It judges RESOLVED addresses, never host text: a name is resolved once, every address it
resolved to must be public, and the caller dials the vetted address it gets back (no
second resolution, so a name cannot answer differently between the check and the dial).

Public means outside every IANA special-purpose block (RFC 6890 and the registries since)
and, for IPv6, inside global unicast (2000::/3). Transition forms that carry an IPv4
address (IPv4-mapped and -compatible, 6to4, Teredo, the NAT64 well-known prefix) are
judged by the IPv4 addresses they carry. A host may allow an explicit set of networks or
host names; tests may allow exact (address, port) endpoints.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from server.common.addresses import (
    AddressPolicy,
    AddressRefused,
    IPAddress,
    IPNetwork,
    Rule,
    is_localhost_name,
    normalize_host,
)
from server.common.errors import CrewhostError, Forbidden

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]


def _blocks(*rows: tuple[str, str]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(network), name) for network, name in rows)


IPV4_SPECIAL = _blocks(
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "a private network"),
    ("100.64.0.0/10", "shared address space"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (cloud metadata answers here)"),
    ("172.16.0.0/12", "a private network"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation"),
    ("192.31.196.0/24", "AS112"),
    ("192.52.193.0/24", "AMT"),
    ("192.88.99.0/24", "6to4 relay anycast"),
    ("192.168.0.0/16", "a private network"),
    ("192.175.48.0/24", "AS112 direct delegation"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation"),
    ("203.0.113.0/24", "documentation"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
)
IPV6_SPECIAL = _blocks(
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("64:ff9b:1::/48", "local-use NAT64"),
    ("100::/64", "discard-only"),
    ("100:0:0:1::/64", "dummy prefix"),
    ("2001::/23", "IETF protocol assignments"),
    ("2001:db8::/32", "documentation"),
    ("2620:4f:8000::/48", "AS112 direct delegation"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing"),
    ("fc00::/7", "unique local"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local"),
    ("ff00::/8", "multicast"),
)
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_LOW32 = 0xFFFFFFFF

_RULES: dict[str, Rule] = {
    "this network": "unspecified",
    "unspecified": "unspecified",
    "loopback": "loopback",
    "link-local (cloud metadata answers here)": "link-local",
    "link-local": "link-local",
}


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 transition form carries (none for a plain address)."""
    if address in _MAPPED or address in _NAT64:
        return (ipaddress.IPv4Address(int(address) & _LOW32),)
    if address in _COMPATIBLE and int(address) > 1:
        return (ipaddress.IPv4Address(int(address) & _LOW32),)
    if address in _SIXTOFOUR:
        return (ipaddress.IPv4Address((int(address) >> 80) & _LOW32),)
    if address in _TEREDO:
        server, client = address.teredo or (None, None)
        return tuple(a for a in (server, client) if a is not None)
    return ()


def special_block(address: IPAddress) -> str | None:
    """The special-purpose block ``address`` falls in, or None for a public address."""
    if isinstance(address, ipaddress.IPv4Address):
        return next((name for network, name in IPV4_SPECIAL if address in network), None)
    if address.scope_id is not None:
        address = ipaddress.IPv6Address(address.compressed.split("%")[0])
    embedded = _embedded_ipv4(address)
    if embedded:
        for carried in embedded:
            block = special_block(carried)
            if block is not None:
                return block
        return None
    if address in _COMPATIBLE:
        return "unspecified" if int(address) == 0 else "loopback"
    block = next((name for network, name in IPV6_SPECIAL if address in network), None)
    if block is None and address not in _GLOBAL_UNICAST:
        return "reserved"
    return block


def is_public_address(address: IPAddress | str) -> bool:
    """Whether ``address`` lies outside every special-purpose block."""
    if isinstance(address, str):
        parsed = parse_host_address(address)
        if parsed is None:
            raise ValueError(f"{address!r} is not an IP address")
        address = parsed
    return special_block(address) is None


_NUMBER = re.compile(r"0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*")


def _ipv4_part(part: str) -> int | None:
    if not _NUMBER.fullmatch(part):
        return None
    if part.startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part)


def _short_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in any form ``inet_aton`` reads: 1 to 4 parts, each decimal, octal
    (leading 0) or hex (0x), the last part filling the remaining bytes."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = [_ipv4_part(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    values = [number for number in numbers if number is not None]
    *head, last = values
    if any(value > 0xFF for value in head) or last >= 1 << (8 * (5 - len(values))):
        return None
    value = last
    for index, byte in enumerate(head):
        value |= byte << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def parse_host_address(text: str) -> IPAddress | None:
    """The address a URL host or a dial target spells, or None for a name.

    Brackets and a final dot are dropped; IPv4 is read as ``inet_aton`` reads it, so
    ``127.1``, ``0x7f.1``, ``0177.0.0.1`` and ``2130706433`` are all loopback.
    """
    host = normalize_host(text)
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            return None
    return _short_ipv4(host)


class NonPublicAddress(AddressRefused):
    """A fetch or a dial was refused: the target is, or resolved to, a non-public address."""

    def __init__(self, target: str, address: IPAddress, block: str) -> None:
        message = (
            f"Crewhost refused {target}: {address} is {block}, not a public address "
            "(only public addresses may be reached from here)"
        )
        Forbidden.__init__(self, message)
        self.url = target
        self.rule: Rule = _RULES.get(block, "private")
        self.block = block


@dataclass(frozen=True)
class PublicOnlyPolicy:
    """Public addresses only, plus what is allowed on purpose.

    ``allowed_networks`` and ``allowed_names`` come from a host setting;
    ``allowed_endpoints`` (exact address and port) exists so a test can reach its own
    loopback fixture without opening loopback as a whole.
    """

    allowed_networks: tuple[IPNetwork, ...] = ()
    allowed_names: frozenset[str] = frozenset()
    allowed_endpoints: frozenset[tuple[IPAddress, int]] = frozenset()

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> PublicOnlyPolicy:
        """The policy of an allow-list of names, addresses and CIDR ranges; raises
        ``ValueError`` naming a bad entry."""
        # The browser policy reads allow-lists already: same entries, same errors.
        parsed = AddressPolicy.from_entries(entries)
        return cls(parsed.allowed_networks, parsed.allowed_names)

    def permits(self, address: IPAddress, port: int) -> bool:
        """Whether ``address`` may be dialed on ``port``."""
        if (address, port) in self.allowed_endpoints:
            return True
        if any(address in network for network in self.allowed_networks):
            return True
        return is_public_address(address)

    def permits_name(self, host: str) -> bool:
        """Whether ``host`` (a name) is allowed whatever it resolves to."""
        return normalize_host(host) in self.allowed_names

    def vet(self, target: str, address: IPAddress, port: int) -> None:
        """Raise ``NonPublicAddress`` unless ``address`` may be dialed on ``port``."""
        if not self.permits(address, port):
            raise NonPublicAddress(target, address, special_block(address) or "not allowed")


class HostNotFound(CrewhostError):
    """A name did not resolve."""

    status = 502
    code = "hostNotFound"

    def __init__(self, host: str) -> None:
        super().__init__(f"The name {host} could not be resolved")
        self.host = host


async def system_resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to, asked once, off the event loop."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise HostNotFound(host) from error
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise HostNotFound(host)
    return addresses


async def resolve_pinned(
    host: str, port: int, policy: PublicOnlyPolicy, *, resolver: Resolver = system_resolve
) -> IPAddress:
    """The one address to dial for ``host``: resolved once, every answer vetted.

    Raises ``NonPublicAddress`` (code ``addressRefused``) when ANY resolved address is
    refused, ``HostNotFound`` when the name does not resolve.
    """
    target = f"{host}:{port}"
    literal = parse_host_address(host)
    if literal is not None:
        policy.vet(target, literal, port)
        return literal
    name = normalize_host(host)
    if is_localhost_name(name) and not policy.permits_name(name):
        raise NonPublicAddress(target, ipaddress.IPv4Address("127.0.0.1"), "loopback")
    addresses = await resolver(name, port)
    if not addresses:
        raise HostNotFound(name)
    if not policy.permits_name(name):
        for address in addresses:
            policy.vet(target, address, port)
    return addresses[0]
