"""This computer's own network as the kernel's tables give it: interface prefixes, on-link
routes (none through a gateway, a reject route or loopback), public ones kept."""

from __future__ import annotations

import ipaddress

from peer.own_network import (
    InterfaceTable,
    ipv6_prefix_lengths,
    on_link_routes,
    read_interface_table,
)

IF_INET6 = """\
2a0e4f00000100020000000000000005 02 40 00 00     eth0
fe8000000000000000fc00fffe000001 02 40 20 80     eth0
00000000000000000000000000000001 01 80 10 80       lo
"""
# 44.0.7.0/28 on eth0, 10.8.0.0/24 on tun0, a default route and a VPN's catch-all half
# through gateways, and 203.0.113.0/24 unreachable (reject).
ROUTE = """\
Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0107002C\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t0007002C\t00000000\t0001\t0\t0\t0\tF0FFFFFF\t0\t0\t0
tun0\t0000080A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
tun0\t00000000\t0100080A\t0003\t0\t0\t0\t00000080\t0\t0\t0
eth0\t007100CB\t00000000\t0201\t0\t0\t0\t00FFFFFF\t0\t0\t0
"""
IPV6_ROUTE = """\
2a0e4f00000100020000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
2a0e4f00000100090000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00040001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000002 00000000 00000003     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000001 00000000 00000001      wg0
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
"""  # noqa: E501 (the kernel's lines)


def test_the_kernels_tables_give_each_address_its_prefix_and_every_on_link_route() -> None:
    assert dict(ipv6_prefix_lengths(IF_INET6)) == {
        ipaddress.IPv6Address("2a0e:4f00:1:2::5"): 64,
        ipaddress.IPv6Address("fe80::fc:ff:fe00:1"): 64,
        ipaddress.IPv6Address("::1"): 128,
    }
    assert set(on_link_routes(ROUTE, IPV6_ROUTE)) == {
        ipaddress.ip_network("44.0.7.0/28"),
        ipaddress.ip_network("10.8.0.0/24"),
        ipaddress.ip_network("2a0e:4f00:1:2::/64"),
        ipaddress.ip_network("2a0e:4f00:1:9::/64"),
        ipaddress.ip_network("::/0"),  # a VPN's default on-link: dropped as a catch-all
    }


def test_the_links_are_the_public_prefixes_and_never_a_catch_all() -> None:
    table = InterfaceTable(
        addresses=(
            ipaddress.ip_interface("2a0e:4f00:1:2::5/64"),
            ipaddress.ip_interface("192.168.1.20/24"),
            ipaddress.ip_interface("44.0.7.10/32"),
        ),
        on_link_routes=on_link_routes(ROUTE, IPV6_ROUTE),
    )
    assert table.on_link_networks() == (
        ipaddress.ip_network("44.0.7.0/28"),
        ipaddress.ip_network("44.0.7.10/32"),
        ipaddress.ip_network("2a0e:4f00:1:2::/64"),
        ipaddress.ip_network("2a0e:4f00:1:9::/64"),
    )
    assert table.own_addresses() == {
        ipaddress.ip_address("2a0e:4f00:1:2::5"),
        ipaddress.ip_address("192.168.1.20"),
        ipaddress.ip_address("44.0.7.10"),
    }


def test_this_computers_table_holds_its_addresses_with_their_prefixes() -> None:
    table = read_interface_table()
    for interface in table.addresses:
        assert interface.ip in table.own_addresses()
        assert not interface.ip.is_loopback
