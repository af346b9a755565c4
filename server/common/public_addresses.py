"""The address policy applied to a dial: what ``web_fetch``, a browser proxy or an egress
stream may reach, resolved once and pinned.

It judges RESOLVED addresses, never host text: a name is resolved once, every address it
resolved to must be public, and the caller dials the vetted address it gets back (no
second resolution, so a name cannot answer differently between the check and the dial).

Public means what ``server.common.browser_address_policy`` says (its one table of special-purpose
blocks, which the browsers apply too), and not one of the host's own addresses when
``own_addresses`` lists them. A host may allow an explicit set of networks or host names;
tests may allow exact (address, port) endpoints.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from server.common.browser_address_policy import (
    ALWAYS_REFUSED,
    HOST_BLOCK,
    AddressRefused,
    IPAddress,
    IPNetwork,
    Row,
    Rule,
    block_of,
    is_localhost_name,
    judge,
    normalize_host,
    parse_allow_list,
    policy_rows,
    special_block,
)
from server.common.errors import CrewhostError, Forbidden

Resolver = Callable[[str, int], Awaitable[list[IPAddress]]]


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
        self.address = address
        self.rule: Rule = _rule_of(address, block)
        self.block = block


class SavedAddressRefused(Forbidden):
    """What a team saves for the host to dial (a proxy, a webhook receiver, an MCP server)
    is refused: its address is not public, nor allowed by the host setting ``setting``,
    where an on-premises one is allowed. Each kind has its own code."""

    setting: ClassVar[str]

    def __init__(self, what: str, refused: NonPublicAddress, *, field: str) -> None:
        super().__init__(
            f"Crewhost refused {what}: {refused.address} is {refused.block}, not a public "
            f"address (an on-premises one is allowed by the host setting {self.setting}, "
            f"CREWHOST_HOST_{self.setting.upper()})",
            field=field,
        )
        self.block = refused.block


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
    own_addresses: frozenset[IPAddress] = frozenset()
    # The browsers' rows with every rule in force: one table, one way of matching it.
    rows: tuple[Row, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rules = (*ALWAYS_REFUSED, "private")
        rows = policy_rows(self.allowed_networks, self.own_addresses, rules)
        object.__setattr__(self, "rows", rows)

    @classmethod
    def from_entries(
        cls, entries: Iterable[str], *, own_addresses: Iterable[IPAddress] = ()
    ) -> PublicOnlyPolicy:
        """The policy of an allow-list of names, addresses and CIDR ranges; raises
        ``ValueError`` naming a bad entry. ``own_addresses`` (``interface_addresses()``)
        are refused unless allowed."""
        names, networks = parse_allow_list(entries)
        return cls(networks, names, own_addresses=frozenset(own_addresses))

    def permits(self, address: IPAddress, port: int) -> bool:
        """Whether ``address`` may be dialed on ``port``."""
        return (address, port) in self.allowed_endpoints or judge(self.rows, address) is None

    def permits_name(self, host: str) -> bool:
        """Whether ``host`` (a name) is allowed whatever it resolves to."""
        return normalize_host(host) in self.allowed_names

    def vet(self, target: str, address: IPAddress, port: int) -> None:
        """Raise ``NonPublicAddress`` unless ``address`` may be dialed on ``port``."""
        if not self.permits(address, port):
            refused = judge(self.rows, address) == "host"
            block = HOST_BLOCK if refused else special_block(address) or "not allowed"
            raise NonPublicAddress(target, address, block)


def _rule_of(address: IPAddress, block: str) -> Rule:
    if block == HOST_BLOCK:
        return "host"
    found = block_of(address)
    return "reserved" if found is None or found.rule is None else found.rule


class NameNotResolved(CrewhostError):
    """A name did not resolve."""

    status = 502
    code = "nameNotResolved"

    def __init__(self, host: str) -> None:
        super().__init__(f"The name {host} could not be resolved")
        self.host = host


async def system_resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to, asked once, off the event loop."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise NameNotResolved(host) from error
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%")[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise NameNotResolved(host)
    return addresses


async def resolve_pinned(
    host: str, port: int, policy: PublicOnlyPolicy, *, resolver: Resolver = system_resolve
) -> IPAddress:
    """The one address to dial for ``host``: resolved once, every answer vetted.

    Raises ``NonPublicAddress`` (code ``addressRefused``) when ANY resolved address is
    refused, ``NameNotResolved`` when the name does not resolve.
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
        raise NameNotResolved(name)
    if not policy.permits_name(name):
        for address in addresses:
            policy.vet(target, address, port)
    return addresses[0]
