"""Which network addresses the host may reach on a page's, an agent's or a proxy's behalf:
the one address policy of the host's browsers, ``web_fetch``, browser proxies and egress.

Public-only. One ordered table (``BLOCKS``) names every special-purpose block (RFC 6890
and the IANA registries since): loopback, link-local (cloud metadata), unspecified,
private networks (10/8, 172.16/12, 192.168/16, fc00::/7), and the rest (shared address
space 100.64/10, documentation, benchmarking, multicast, Teredo, everything outside IPv6
global unicast). IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
NAT64 64:ff9b::/96, 6to4 2002::/16) are rows of their own, one per IPv4 block they carry,
so ``[::127.0.0.1]`` and ``2002:7f00:1::`` are loopback. Every address of the host's own
interfaces (``interface_addresses``) is refused too: a service listening on all
interfaces answers on them.

The first row that holds an address decides, the way Chromium's ``isInNetEx`` matches (an
IPv4 address against an IPv6 row as its IPv4-mapped form, and back), so the browsers' PAC
script takes the very same rows (``AddressPolicy.rows``) and cannot judge differently.
Allow-lists (settings) come before every row.

Pure, apart from ``interface_addresses``: a name is judged by the addresses it resolved to,
all of them; one refused address refuses the name.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import itertools
import re
import socket
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from server.common.errors import Forbidden

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Rule = Literal["loopback", "link-local", "unspecified", "host", "private", "reserved"]

# Refused whatever the settings say, but for an allow-list entry.
ALWAYS_REFUSED: tuple[Rule, ...] = ("loopback", "link-local", "unspecified", "host", "reserved")
HOST_BLOCK = "this host's own address"


@dataclass(frozen=True, slots=True)
class Block:
    """One row of the table: a network, what it is, and the rule that refuses it (None:
    public, such as an IPv4-mapped form of a public address)."""

    network: IPNetwork
    name: str
    rule: Rule | None


_IPV4: tuple[tuple[str, str, Rule], ...] = (
    ("0.0.0.0/8", "this network (unspecified)", "unspecified"),
    ("10.0.0.0/8", "a private network", "private"),
    ("100.64.0.0/10", "shared address space (carrier-grade NAT)", "reserved"),
    ("127.0.0.0/8", "loopback", "loopback"),
    ("169.254.0.0/16", "link-local / cloud metadata", "link-local"),
    ("172.16.0.0/12", "a private network", "private"),
    ("192.0.0.0/24", "IETF protocol assignments", "reserved"),
    ("192.0.2.0/24", "documentation", "reserved"),
    ("192.31.196.0/24", "AS112", "reserved"),
    ("192.52.193.0/24", "AMT", "reserved"),
    ("192.88.99.0/24", "6to4 relay anycast", "reserved"),
    ("192.168.0.0/16", "a private network", "private"),
    ("192.175.48.0/24", "AS112 direct delegation", "reserved"),
    ("198.18.0.0/15", "benchmarking", "reserved"),
    ("198.51.100.0/24", "documentation", "reserved"),
    ("203.0.113.0/24", "documentation", "reserved"),
    ("224.0.0.0/4", "multicast", "reserved"),
    ("240.0.0.0/4", "reserved", "reserved"),
)
# IPv6 forms that carry an IPv4 address in the given bits: (prefix, prefix length,
# shift of the IPv4 address inside the 128 bits, name).
_CARRIERS: tuple[tuple[str, int, int, str], ...] = (
    ("::ffff:0:0", 96, 0, "IPv4-mapped"),
    ("::", 96, 0, "IPv4-compatible"),
    ("64:ff9b::", 96, 0, "NAT64"),
    ("2002::", 16, 80, "6to4"),
)
_IPV6: tuple[tuple[str, str, Rule | None], ...] = (
    # The carriers themselves, once the special IPv4 addresses they may carry are judged.
    ("::ffff:0:0/96", "IPv4-mapped", None),
    ("64:ff9b::/96", "NAT64", None),
    ("::/96", "IPv4-compatible (deprecated)", "reserved"),
    ("64:ff9b:1::/48", "local-use NAT64", "reserved"),
    ("100::/64", "discard-only", "reserved"),
    ("100:0:0:1::/64", "dummy prefix", "reserved"),
    # Teredo carries its client's address inverted, which no CIDR row can match.
    ("2001::/32", "Teredo", "reserved"),
    ("2001::/23", "IETF protocol assignments", "reserved"),
    ("2001:db8::/32", "documentation", "reserved"),
    ("2620:4f:8000::/48", "AS112 direct delegation", "reserved"),
    ("3fff::/20", "documentation", "reserved"),
    ("5f00::/16", "segment routing", "reserved"),
    ("fc00::/7", "unique local (a private network)", "private"),
    ("fe80::/10", "link-local", "link-local"),
    ("fec0::/10", "site-local", "reserved"),
    ("ff00::/8", "multicast", "reserved"),
    ("2000::/3", "global unicast", None),
    ("::/0", "outside IPv6 global unicast", "reserved"),
)


def _blocks() -> Iterator[Block]:
    yield Block(ipaddress.ip_network("::/128"), "unspecified", "unspecified")
    yield Block(ipaddress.ip_network("::1/128"), "loopback", "loopback")
    for network, name, rule in _IPV4:
        yield Block(ipaddress.ip_network(network), name, rule)
    for network, name, rule in _IPV4:
        carried = ipaddress.IPv4Network(network)
        for prefix, length, shift, form in _CARRIERS:
            base = int(ipaddress.IPv6Address(prefix)) | (int(carried.network_address) << shift)
            bits = length + carried.prefixlen
            yield Block(ipaddress.IPv6Network((base, bits)), f"{name}, carried by {form}", rule)
    for network, name, rule6 in _IPV6:
        yield Block(ipaddress.ip_network(network), name, rule6)


BLOCKS: tuple[Block, ...] = tuple(_blocks())


def _other_family(address: IPAddress) -> IPAddress | None:
    """``address`` as the other family sees it in ``isInNetEx``: an IPv4 address as its
    IPv4-mapped IPv6 form, an IPv4-mapped IPv6 address as its IPv4 one."""
    if isinstance(address, ipaddress.IPv4Address):
        return ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
    return address.ipv4_mapped


def matches(address: IPAddress, network: IPNetwork) -> bool:
    """Whether ``network`` holds ``address`` as Chromium's ``isInNetEx`` decides: across
    families, an IPv4 address is its IPv4-mapped IPv6 form."""
    if address.version == network.version:
        return address in network
    other = _other_family(address)
    return other is not None and other in network


def _bare(address: IPAddress) -> IPAddress:
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        return ipaddress.IPv6Address(address.compressed.split("%")[0])
    return address


def block_of(address: IPAddress) -> Block | None:
    """The row of ``BLOCKS`` that decides ``address`` (None: no row, a public IPv4)."""
    address = _bare(address)
    return next((block for block in BLOCKS if matches(address, block.network)), None)


def special_block(address: IPAddress) -> str | None:
    """The special-purpose block ``address`` falls in, or None for a public address."""
    block = block_of(address)
    return None if block is None or block.rule is None else block.name


# -- the host's own addresses ------------------------------------------------------------

_SIOCGIFADDR = 0x8915


def interface_addresses() -> frozenset[IPAddress]:
    """Every address of this machine's network interfaces that no row refuses already
    (loopback and link-local are): the host's own addresses, where a service listening on
    all interfaces answers. Read once at start; Linux (/proc), else the addresses the
    host name resolves to."""
    found: set[IPAddress] = set()
    found.update(_ipv4_of_interfaces())
    found.update(_ipv6_of_interfaces())
    if not found:
        with contextlib.suppress(OSError, UnicodeError):
            for info in socket.getaddrinfo(socket.gethostname(), None):
                found.add(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
    return frozenset(
        address
        for address in found
        if (block := block_of(address)) is None
        or block.rule not in ("loopback", "link-local", "unspecified")
    )


def _ipv4_of_interfaces() -> Iterator[ipaddress.IPv4Address]:
    # The kernel's routing table lists every local address ("/32 host LOCAL"), secondary
    # ones too; an interface's ioctl gives its first address only.
    with contextlib.suppress(OSError):
        lines = Path("/proc/net/fib_trie").read_text(encoding="ascii").splitlines()
        for previous, line in itertools.pairwise(lines):
            if "/32 host LOCAL" in line:
                with contextlib.suppress(ValueError):
                    yield ipaddress.IPv4Address(previous.strip().removeprefix("|-- "))
        return
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _index, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            with contextlib.suppress(OSError):
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, request)
                yield ipaddress.IPv4Address(answer[20:24])


def _ipv6_of_interfaces() -> Iterator[ipaddress.IPv6Address]:
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/if_inet6").read_text(encoding="ascii").splitlines():
            with contextlib.suppress(ValueError, IndexError):
                yield ipaddress.IPv6Address(int(line.split()[0], 16))


# -- the browsers' policy ----------------------------------------------------------------

_RULE_TEXT: Mapping[Rule, str] = {
    "loopback": "loopback addresses are blocked for browsers on this host "
    "(setting browser_allowed_hosts)",
    "link-local": "link-local addresses (cloud metadata among them) are blocked for browsers "
    "on this host (setting browser_allowed_hosts)",
    "unspecified": "unspecified addresses (0.0.0.0, ::) are blocked for browsers on this host "
    "(setting browser_allowed_hosts)",
    "host": "this host's own addresses are blocked for browsers on this host "
    "(setting browser_allowed_hosts)",
    "private": "private network addresses are blocked for browsers on this host "
    "(settings browser_refuse_private, browser_allowed_hosts)",
    "reserved": "special-purpose addresses (shared address space, documentation, "
    "benchmarking, multicast, reserved) are blocked for browsers on this host "
    "(setting browser_allowed_hosts)",
}
_LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
_NAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*")


def refusal_message(url: str, rule: Rule) -> str:
    """What a person or an agent reads when ``url`` was refused by ``rule``."""
    return f"Crewhost refused {url}: {_RULE_TEXT[rule]}"


class AddressRefused(Forbidden):
    """A browser was refused an address by the host's address policy."""

    code: ClassVar[str] = "addressRefused"

    def __init__(self, url: str, rule: Rule) -> None:
        super().__init__(refusal_message(url, rule))
        self.url = url
        self.rule = rule


def normalize_host(host: str) -> str:
    """A URL's host as the policy compares it: lower case, no brackets, no final dot."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.removesuffix(".")


def ip_literal(host: str) -> IPAddress | None:
    """The address ``host`` (normalized) spells, or None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_localhost_name(host: str) -> bool:
    """``localhost`` and ``*.localhost`` (RFC 6761): loopback without asking DNS."""
    return host == "localhost" or host.endswith(".localhost")


def parse_allowed_host(entry: str) -> str | IPNetwork:
    """One allow-list entry: a host name (lower case) or a network (an address is a /32
    or /128). Raises ``ValueError`` saying what an entry may be."""
    text = normalize_host(entry)
    if "/" in text:
        try:
            return ipaddress.ip_network(text, strict=False)
        except ValueError:
            pass
    else:
        address = ip_literal(text)
        if address is not None:
            return ipaddress.ip_network(address)
        if _NAME.fullmatch(text) and not text.replace(".", "").isdigit():
            return text
    raise ValueError(
        f"{entry.strip()!r} is not a host name, an IP address or a CIDR range "
        "(give no scheme, port or path)"
    )


def parse_allow_list(entries: Iterable[str]) -> tuple[frozenset[str], tuple[IPNetwork, ...]]:
    """An allow-list's names and networks; raises ``ValueError`` naming a bad entry."""
    names: set[str] = set()
    networks: list[IPNetwork] = []
    for entry in entries:
        parsed = parse_allowed_host(entry)
        if isinstance(parsed, str):
            names.add(parsed)
        else:
            networks.append(parsed)
    return frozenset(names), tuple(networks)


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a policy as it is applied, first match deciding: the network, and the
    rule that refuses it (None: reachable)."""

    network: IPNetwork
    rule: Rule | None


def policy_rows(
    allowed: Iterable[IPNetwork], own: Iterable[IPAddress], rules: Iterable[Rule]
) -> tuple[Row, ...]:
    """The rows a policy applies, in order: the allow-list, the host's own addresses, then
    ``BLOCKS`` with each block's rule where it is in force."""
    in_force = frozenset(rules)
    rows = [Row(network, None) for network in allowed]
    if "host" in in_force:
        rows += [Row(ipaddress.ip_network(address), "host") for address in sorted(own, key=str)]
    rows += [Row(b.network, b.rule if b.rule in in_force else None) for b in BLOCKS]
    return tuple(rows)


def judge(rows: Iterable[Row], address: IPAddress) -> Rule | None:
    """The rule of the first row that holds ``address`` (None: reachable)."""
    address = _bare(address)
    other = _other_family(address)  # once, not per row: the filtering proxy asks per connection
    for row in rows:
        if row.network.version == address.version:
            if address in row.network:
                return row.rule
        elif other is not None and other in row.network:
            return row.rule
    return None


@dataclass(frozen=True)
class AddressPolicy:
    """What the host's browsers are refused: public-only, the host's own addresses
    included, minus the allow-list; private networks only while ``refuse_private``."""

    allowed_names: frozenset[str] = frozenset()
    allowed_networks: tuple[IPNetwork, ...] = ()
    refuse_private: bool = True
    own_addresses: frozenset[IPAddress] = frozenset()
    rules: tuple[Rule, ...] = field(init=False)
    rows: tuple[Row, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rules = (*ALWAYS_REFUSED, "private") if self.refuse_private else ALWAYS_REFUSED
        object.__setattr__(self, "rules", rules)
        rows = policy_rows(self.allowed_networks, self.own_addresses, rules)
        object.__setattr__(self, "rows", rows)

    @classmethod
    def from_entries(
        cls,
        entries: Iterable[str],
        *,
        refuse_private: bool = True,
        own_addresses: Iterable[IPAddress] = (),
    ) -> AddressPolicy:
        """The policy of an allow-list as the settings give it; raises ``ValueError``."""
        names, networks = parse_allow_list(entries)
        return cls(names, networks, refuse_private, frozenset(own_addresses))

    def check_address(self, address: IPAddress | str) -> Rule | None:
        """The rule that refuses ``address``, or None when it may be reached."""
        if isinstance(address, str):
            address = ipaddress.ip_address(normalize_host(address))
        return judge(self.rows, address)

    def needs_resolving(self, host: str) -> bool:
        """Whether judging ``host`` takes the addresses its name resolves to."""
        host = normalize_host(host)
        return not (
            ip_literal(host) is not None or host in self.allowed_names or is_localhost_name(host)
        )

    def check_host(self, host: str, resolved: Iterable[IPAddress | str] = ()) -> Rule | None:
        """The rule that refuses a URL's ``host``, or None when it may be reached.

        A name is judged by ``resolved``, the addresses it resolved to, unless it is on
        the allow-list or a ``localhost`` name.
        """
        host = normalize_host(host)
        literal = ip_literal(host)
        if literal is not None:
            return self.check_address(literal)
        if host in self.allowed_names:
            return None
        if is_localhost_name(host):
            return "loopback"
        for address in resolved:
            rule = self.check_address(address)
            if rule is not None:
                return rule
        return None
