"""This computer's own network, which a shared computer's egress keeps the host out of:
each interface address with its prefix, and every prefix the routing table puts on-link.

Another device on the member's link (a printer, a NAS) may have a global IPv6 address, or
a public IPv4 one on a public subnet: public address space, which the public-only table
permits. The prefixes of the member's own links refuse it. Read once when sharing starts:
Linux from /proc; elsewhere each own IPv6 address stands for its /64.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from server.common.browser_address_policy import (
    IPAddress,
    IPNetwork,
    interface_addresses,
    special_block,
)

IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

# A global unicast subnet (RFC 4291), where no prefix length is known.
_IPV6_SUBNET = 64
# A shorter on-link route is a VPN device's catch-all (``0.0.0.0/1 dev tun0``), not a link.
_SHORTEST_LINK = {4: 16, 6: 32}
_RTF_UP, _RTF_GATEWAY, _RTF_REJECT = 0x0001, 0x0002, 0x0200


@dataclass(frozen=True)
class InterfaceTable:
    """This computer's interface addresses, each with its on-link prefix (``2a01:…:5/64``),
    and the routes that name no gateway (on-link) in its routing table."""

    addresses: tuple[IPInterface, ...] = ()
    on_link_routes: tuple[IPNetwork, ...] = ()

    def own_addresses(self) -> frozenset[IPAddress]:
        """Every address of this computer's interfaces."""
        return frozenset(interface.ip for interface in self.addresses)

    def on_link_networks(self) -> tuple[IPNetwork, ...]:
        """The public prefixes on this computer's links (special-purpose ones are refused
        already, under their own names), without catch-all routes."""
        found = {interface.network for interface in self.addresses} | set(self.on_link_routes)
        return tuple(
            sorted(
                (network for network in found if _is_public_link(network)),
                key=lambda network: (network.version, network),
            )
        )


def _is_public_link(network: IPNetwork) -> bool:
    if network.prefixlen < _SHORTEST_LINK[network.version]:
        return False
    return special_block(network.network_address) is None or (
        special_block(network.broadcast_address) is None
    )


def read_interface_table() -> InterfaceTable:
    """This computer's interface table as the kernel gives it now."""
    prefixes: dict[IPAddress, int] = dict(ipv6_prefix_lengths(_read("/proc/net/if_inet6")))
    addresses = tuple(
        ipaddress.ip_interface((address, prefixes.get(address, _default_prefix(address))))
        for address in sorted(interface_addresses(), key=lambda address: (address.version, address))
    )
    routes = on_link_routes(_read("/proc/net/route"), _read("/proc/net/ipv6_route"))
    return InterfaceTable(addresses, routes)


def _default_prefix(address: IPAddress) -> int:
    # An IPv4 address without a known prefix: its subnet shows as an on-link route.
    return _IPV6_SUBNET if address.version == 6 else 32


def _read(path: str) -> str:
    with contextlib.suppress(OSError, UnicodeError):
        return Path(path).read_text(encoding="ascii")
    return ""


def ipv6_prefix_lengths(if_inet6: str) -> Iterator[tuple[ipaddress.IPv6Address, int]]:
    """Each address of ``/proc/net/if_inet6`` with its prefix length."""
    for line in if_inet6.splitlines():
        with contextlib.suppress(ValueError, IndexError):
            fields = line.split()
            yield ipaddress.IPv6Address(int(fields[0], 16)), int(fields[2], 16)


def on_link_routes(route: str, ipv6_route: str) -> tuple[IPNetwork, ...]:
    """The usable routes without a gateway of ``/proc/net/route`` (IPv4, main table) and
    ``/proc/net/ipv6_route`` (IPv6), loopback's own excepted."""
    return (*_ipv4_on_link(route.splitlines()[1:]), *_ipv6_on_link(ipv6_route.splitlines()))


def _on_link(flags: int, device: str) -> bool:
    return bool(flags & _RTF_UP) and not flags & (_RTF_GATEWAY | _RTF_REJECT) and device != "lo"


def _ipv4_on_link(lines: Iterable[str]) -> Iterator[IPNetwork]:
    # Iface Destination Gateway Flags RefCnt Use Metric Mask …, addresses in host order.
    for line in lines:
        with contextlib.suppress(ValueError, IndexError, struct.error):
            fields = line.split()
            if _on_link(int(fields[3], 16), fields[0]) and int(fields[2], 16) == 0:
                destination, mask = (
                    socket.inet_ntoa(struct.pack("=I", int(fields[index], 16))) for index in (1, 7)
                )
                yield ipaddress.IPv4Network(f"{destination}/{mask}", strict=False)


def _ipv6_on_link(lines: Iterable[str]) -> Iterator[IPNetwork]:
    # destination, its length, source, its length, next hop, metric, refs, use, flags, device
    for line in lines:
        with contextlib.suppress(ValueError, IndexError):
            fields = line.split()
            if _on_link(int(fields[8], 16), fields[9]) and int(fields[4], 16) == 0:
                yield ipaddress.IPv6Network((int(fields[0], 16), int(fields[1], 16)), strict=False)
