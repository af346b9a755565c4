"""Which network addresses the host's browsers may reach: the browser address policy.

By default a browser is refused the host's own loopback (127/8, ::1, ``localhost`` and
``*.localhost``), link-local addresses (169.254/16 and fe80::/10, where cloud metadata
services answer) and unspecified addresses (0.0.0.0/8, ::), where a prompt-injected agent
could read the hub or another local service. Private ranges (10/8, 172.16/12,
192.168/16, fc00::/7: intranets) are refused only with ``browser_refuse_private``. The
allow-list ``browser_allowed_hosts`` (host names, addresses, CIDR ranges) lets a team
reach a local service on purpose.

Pure: it judges what it is given and resolves nothing. A name is judged by the
addresses it resolved to, all of them: one refused address refuses the name. An
IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) is judged as the IPv4 address it carries.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from server.common.errors import Forbidden

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Rule = Literal["loopback", "link-local", "unspecified", "private"]

RULE_NETWORKS: Mapping[Rule, tuple[IPNetwork, ...]] = {
    "loopback": (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")),
    "link-local": (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10")),
    "unspecified": (ipaddress.ip_network("0.0.0.0/8"), ipaddress.ip_network("::/128")),
    "private": (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("172.16.0.0/12"),
        ipaddress.ip_network("192.168.0.0/16"),
        ipaddress.ip_network("fc00::/7"),
    ),
}
ALWAYS_REFUSED: tuple[Rule, ...] = ("loopback", "link-local", "unspecified")

_RULE_TEXT: Mapping[Rule, str] = {
    "loopback": "loopback addresses are blocked for browsers on this host "
    "(setting browser_allowed_hosts)",
    "link-local": "link-local addresses (cloud metadata among them) are blocked for browsers "
    "on this host (setting browser_allowed_hosts)",
    "unspecified": "unspecified addresses (0.0.0.0, ::) are blocked for browsers on this host "
    "(setting browser_allowed_hosts)",
    "private": "private network addresses are blocked for browsers on this host "
    "(settings browser_refuse_private, browser_allowed_hosts)",
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


@dataclass(frozen=True)
class AddressPolicy:
    """What the host's browsers are refused: the rules in force minus the allow-list."""

    allowed_names: frozenset[str] = frozenset()
    allowed_networks: tuple[IPNetwork, ...] = ()
    refuse_private: bool = False
    rules: tuple[Rule, ...] = field(init=False)

    def __post_init__(self) -> None:
        rules = (*ALWAYS_REFUSED, "private") if self.refuse_private else ALWAYS_REFUSED
        object.__setattr__(self, "rules", rules)

    @classmethod
    def from_entries(cls, entries: Iterable[str], *, refuse_private: bool = False) -> AddressPolicy:
        """The policy of an allow-list as the settings give it; raises ``ValueError``."""
        names: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            parsed = parse_allowed_host(entry)
            if isinstance(parsed, str):
                names.add(parsed)
            else:
                networks.append(parsed)
        return cls(frozenset(names), tuple(networks), refuse_private)

    def check_address(self, address: IPAddress | str) -> Rule | None:
        """The rule that refuses ``address``, or None when it may be reached."""
        if isinstance(address, str):
            address = ipaddress.ip_address(normalize_host(address))
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in self.allowed_networks):
            return None
        for rule in self.rules:
            if any(address in network for network in RULE_NETWORKS[rule]):
                return rule
        return None

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
