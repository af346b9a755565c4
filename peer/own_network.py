"""This computer's own network, which a shared computer's egress keeps the host out of:
each interface address with its prefix, and every prefix the routing table puts on-link.

Another device on the member's link (a printer, a NAS) may have a global IPv6 address, or
a public IPv4 one on a public subnet: public address space, which the public-only table
permits. The prefixes of the member's own links refuse it. Every platform's adapters give
their addresses with prefix lengths (``ifaddr``: getifaddrs, GetAdaptersAddresses on
Windows); Linux adds the on-link routes of /proc. A global IPv6 address stands for at
least its /64 even when listed alone (a DHCPv6 /128).
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import ifaddr

from server.common.browser_address_policy import (
    IPAddress,
    IPNetwork,
    block_of,
    interface_addresses,
    special_block,
)

IPInterface = ipaddress.IPv4Interface | ipaddress.IPv6Interface

# A global unicast subnet (RFC 4291): a global IPv6 address's link is at least its /64.
_IPV6_SUBNET = 64
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
# A shorter on-link route is a VPN device's catch-all (``0.0.0.0/1 dev tun0``), not a link.
_SHORTEST_LINK = {4: 16, 6: 32}
_RTF_UP, _RTF_GATEWAY, _RTF_REJECT = 0x0001, 0x0002, 0x0200


@dataclass(frozen=True)
class InterfaceTable:
    """This computer's interface addresses, each with its prefix as its adapter lists it
    (``2a01:…:5/64``), and the routes that name no gateway (on-link) in its routing table."""

    addresses: tuple[IPInterface, ...] = ()
    on_link_routes: tuple[IPNetwork, ...] = ()

    def own_addresses(self) -> frozenset[IPAddress]:
        """Every address of this computer's interfaces."""
        return frozenset(interface.ip for interface in self.addresses)

    def on_link_networks(self) -> tuple[IPNetwork, ...]:
        """The public prefixes on this computer's links (special-purpose ones are refused
        already, under their own names), without catch-all routes."""
        found = {_link_of(interface) for interface in self.addresses} | set(self.on_link_routes)
        return tuple(
            sorted(
                (network for network in found if _is_public_link(network)),
                key=lambda network: (network.version, network),
            )
        )


def _link_of(interface: IPInterface) -> IPNetwork:
    # Neighbours share a global address's /64 though DHCPv6 lists the address as a /128.
    if isinstance(interface, ipaddress.IPv6Interface) and interface.ip in _GLOBAL_UNICAST:
        prefix = min(interface.network.prefixlen, _IPV6_SUBNET)
        return ipaddress.IPv6Network((interface.ip, prefix), strict=False)
    return interface.network


def _is_public_link(network: IPNetwork) -> bool:
    if network.prefixlen < _SHORTEST_LINK[network.version]:
        return False
    return special_block(network.network_address) is None or (
        special_block(network.broadcast_address) is None
    )


def read_interface_table() -> InterfaceTable:
    """This computer's interface table as its adapters and (Linux) its kernel's routing
    tables give it now."""
    try:
        addresses = adapter_interfaces(ifaddr.get_adapters())
    except Exception:
        # No adapter list (ifaddr failed on one: no netmask, …): the addresses found
        # otherwise, each alone (an IPv6 one's /64 still counts, and an IPv4 one's subnet
        # shows as an on-link route).
        addresses = _sorted(ipaddress.ip_interface(address) for address in interface_addresses())
    routes = on_link_routes(_read("/proc/net/route"), _read("/proc/net/ipv6_route"))
    return InterfaceTable(addresses, routes)


def adapter_interfaces(adapters: Iterable[ifaddr.Adapter]) -> tuple[IPInterface, ...]:
    """Each address of ``adapters`` with its prefix length, but loopback, link-local and
    unspecified ones (refused already, under their own names)."""
    found: set[IPInterface] = set()
    for adapter in adapters:
        for ip in adapter.ips:
            # An IPv6 address is (address, flow info, scope id).
            text = ip.ip[0] if isinstance(ip.ip, tuple) else ip.ip
            with contextlib.suppress(ValueError):
                found.add(ipaddress.ip_interface((text.split("%")[0], ip.network_prefix)))
    return _sorted(interface for interface in found if _is_own(interface.ip))


def _is_own(address: IPAddress) -> bool:
    block = block_of(address)
    return block is None or block.rule not in ("loopback", "link-local", "unspecified")


def _sorted(interfaces: Iterable[IPInterface]) -> tuple[IPInterface, ...]:
    return tuple(sorted(interfaces, key=lambda interface: (interface.version, interface)))


def _read(path: str) -> str:
    with contextlib.suppress(OSError, UnicodeError):
        return Path(path).read_text(encoding="ascii")
    return ""


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
