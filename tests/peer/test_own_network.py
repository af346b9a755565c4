"""This computer's own network as its adapters and the kernel's tables give it: interface
prefixes on every platform, on-link routes (none through a gateway, a reject route or
loopback), public ones kept, a global IPv6 address's /64 however it is listed."""

from __future__ import annotations

import ipaddress

import ifaddr

from peer.own_network import (
    InterfaceTable,
    adapter_interfaces,
    on_link_routes,
    read_interface_table,
)

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


def test_the_kernels_route_tables_give_every_on_link_route() -> None:
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


def test_each_adapters_addresses_keep_their_prefixes_on_every_platform() -> None:
    """The adapters as ``ifaddr`` lists them on Linux, macOS and Windows (there, a GUID
    names the adapter and IPv6 addresses carry a scope): no /proc needed."""
    adapters = [
        ifaddr.Adapter(
            "lo0", "lo0", [ifaddr.IP("127.0.0.1", 8, "lo0"), ifaddr.IP(("::1", 0, 0), 128, "lo0")]
        ),
        ifaddr.Adapter(
            "{846EE342-7039-11DE-9D20-806E6F6E6963}",
            "Intel(R) Wi-Fi 6 AX201",
            [
                ifaddr.IP("44.0.7.10", 28, "Wi-Fi"),
                ifaddr.IP("192.168.1.20", 24, "Wi-Fi"),
                ifaddr.IP(("2a0e:4f00:1:2::5", 0, 0), 64, "Wi-Fi"),
                ifaddr.IP(("fe80::fc:ff:fe00:1", 0, 12), 64, "Wi-Fi"),
            ],
        ),
        ifaddr.Adapter("utun3", "utun3", [ifaddr.IP(("2a0e:4f00:7::9", 0, 0), 56, "utun3")]),
    ]
    interfaces = adapter_interfaces(adapters)
    assert interfaces == (
        ipaddress.ip_interface("44.0.7.10/28"),
        ipaddress.ip_interface("192.168.1.20/24"),
        ipaddress.ip_interface("2a0e:4f00:1:2::5/64"),
        ipaddress.ip_interface("2a0e:4f00:7::9/56"),
    )
    assert InterfaceTable(interfaces).on_link_networks() == (
        ipaddress.ip_network("44.0.7.0/28"),
        ipaddress.ip_network("2a0e:4f00:1:2::/64"),
        ipaddress.ip_network("2a0e:4f00:7::/56"),
    )


def test_a_global_ipv6_address_listed_alone_stands_for_its_link_s_64() -> None:
    """DHCPv6 lists the address as a /128 and the router's advertisement may put no
    on-link route beside it: the neighbours are in its /64 all the same."""
    table = InterfaceTable(
        addresses=(
            ipaddress.ip_interface("2a0e:4f00:1:2::5/128"),
            ipaddress.ip_interface("2a0e:4f00:3:4::6/96"),
            ipaddress.ip_interface("fd00::2/128"),
        )
    )
    assert table.on_link_networks() == (
        ipaddress.ip_network("2a0e:4f00:1:2::/64"),
        ipaddress.ip_network("2a0e:4f00:3:4::/64"),
    )
    assert table.own_addresses() == {
        ipaddress.ip_address("2a0e:4f00:1:2::5"),
        ipaddress.ip_address("2a0e:4f00:3:4::6"),
        ipaddress.ip_address("fd00::2"),
    }
