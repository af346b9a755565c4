"""The public-only address policy: every special-purpose block, every spelling, one resolution."""

from __future__ import annotations

import ipaddress

import pytest

from server.common.browser_address_policy import AddressRefused, special_block
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    is_public_address,
    parse_host_address,
    resolve_pinned,
)
from tests.support.resolvers import TableResolver

DEFAULT = PublicOnlyPolicy()

REFUSED = [
    "0.0.0.0",  # noqa: S104 - an address judged, not bound
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.1",
    "192.0.0.9",
    "192.0.0.170",
    "192.0.2.1",
    "192.31.196.1",
    "192.52.193.1",
    "192.88.99.1",
    "192.168.1.1",
    "192.175.48.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.1",
    "203.0.113.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "::10.0.0.1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::a00:1",
    "64:ff9b::169.254.169.254",
    "64:ff9b:1::8.8.8.8",
    "2002:7f00:1::",
    "2002:c0a8:101::1",
    "2002:a9fe:a9fe::",
    # Teredo: server 65.54.227.120, client 127.0.0.1 (stored inverted: 80ff:fffe)
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    # Teredo with a private server (10.0.0.1) and a documentation client
    "2001:0:a00:1:8000:63bf:3fff:fdd2",
    # Teredo is refused whole: server 65.54.227.120, client 8.8.8.8 (inverted: f7f7:f7f7)
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
    "100::1",
    "100:0:0:1::1",
    "2001:1::1",
    "2001:2::1",
    "2001:3::1",
    "2001:10::1",
    "2001:20::1",
    "2001:db8::1",
    "2620:4f:8000::1",
    "3fff::1",
    "5f00::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%eth0",
    "fec0::1",
    "ff02::1",
    "::ffff:0:7f00:1",  # SIIT-translated form, outside global unicast
    "4000::1",
    "1::1",
]

PUBLIC = [
    "1.1.1.1",
    "8.8.8.8",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "192.0.1.1",
    "192.169.0.1",
    "198.17.255.255",
    "198.20.0.1",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
]


@pytest.mark.parametrize("text", REFUSED)
def test_every_special_purpose_address_is_refused(text: str) -> None:
    address = parse_host_address(text)
    assert address is not None
    assert not is_public_address(address)
    assert not DEFAULT.permits(address, 443)
    assert special_block(address) is not None


@pytest.mark.parametrize("text", PUBLIC)
def test_public_addresses_are_permitted(text: str) -> None:
    address = parse_host_address(text)
    assert address is not None
    assert is_public_address(address), special_block(address)
    assert DEFAULT.permits(address, 80)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7F000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0", "0.0.0.0"),  # noqa: S104 - an address judged, not bound
        ("0x", "0.0.0.0"),  # noqa: S104
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("169.254.43518", "169.254.169.254"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::1]", "::1"),
        ("[::FFFF:7F00:1]", "::ffff:127.0.0.1"),
        ("8.8.8.8", "8.8.8.8"),
    ],
)
def test_short_hex_and_octal_ipv4_forms_read_as_inet_aton_does(text: str, address: str) -> None:
    assert parse_host_address(text) == ipaddress.ip_address(address)


@pytest.mark.parametrize(
    "text",
    [
        "example.com",
        "127.0.0.1.nip.io",
        "1.2.3.4.5",
        "256.1.1.1",
        "1.16777216",
        "4294967296",
        "08.1.1.1",
        "0x1g",
        "",
        "::g",
        "[1::2::3]",
        "1..2",
    ],
)
def test_names_and_malformed_numbers_are_not_addresses(text: str) -> None:
    assert parse_host_address(text) is None


def test_a_string_that_is_not_an_address_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not an IP address"):
        is_public_address("example.com")
    assert not is_public_address("127.1")


def test_allowed_networks_names_and_endpoints() -> None:
    policy = PublicOnlyPolicy.from_entries(["10.0.0.0/8", "intranet.example", "fd00::5"])
    assert policy.permits(ipaddress.ip_address("10.2.3.4"), 80)
    assert policy.permits(ipaddress.ip_address("fd00::5"), 80)
    assert not policy.permits(ipaddress.ip_address("fd00::6"), 80)
    assert not policy.permits(ipaddress.ip_address("127.0.0.1"), 80)
    assert policy.permits_name("Intranet.Example.")
    loopback = ipaddress.ip_address("127.0.0.1")
    endpoint = PublicOnlyPolicy(allowed_endpoints=frozenset({(loopback, 8080)}))
    assert endpoint.permits(loopback, 8080)
    assert not endpoint.permits(loopback, 8081)
    with pytest.raises(ValueError, match="not a host name"):
        PublicOnlyPolicy.from_entries(["http://x/"])


async def test_resolve_pinned_resolves_once_and_returns_the_vetted_address() -> None:
    resolver = TableResolver({"public.example": ["93.184.216.34", "2606:2800:220:1::1"]})
    address = await resolve_pinned("public.example", 443, DEFAULT, resolver=resolver)
    assert address == ipaddress.ip_address("93.184.216.34")
    assert resolver.asked == ["public.example"]


@pytest.mark.parametrize(
    ("host", "answers"),
    [
        ("loopback.example", ["127.0.0.1"]),
        ("mixed.example", ["93.184.216.34", "10.0.0.7"]),
        ("metadata.example", ["169.254.169.254"]),
        ("v6.example", ["8.8.8.8", "::ffff:192.168.0.1"]),
    ],
)
async def test_any_refused_answer_refuses_the_name(host: str, answers: list[str]) -> None:
    resolver = TableResolver({host: answers})
    with pytest.raises(NonPublicAddress) as refused:
        await resolve_pinned(host, 80, DEFAULT, resolver=resolver)
    assert isinstance(refused.value, AddressRefused)
    assert refused.value.code == "addressRefused"
    assert host in refused.value.message


@pytest.mark.parametrize(
    "host", ["127.1", "[::1]", "0x7f.1", "2130706433", "localhost", "a.localhost"]
)
async def test_literals_and_localhost_are_judged_without_asking_dns(host: str) -> None:
    resolver = TableResolver({})
    with pytest.raises(NonPublicAddress):
        await resolve_pinned(host, 80, DEFAULT, resolver=resolver)
    assert resolver.asked == []


async def test_an_allowed_name_may_resolve_to_a_private_address() -> None:
    resolver = TableResolver({"intranet.example": ["10.1.1.1"]})
    policy = PublicOnlyPolicy.from_entries(["intranet.example"])
    address = await resolve_pinned("intranet.example", 80, policy, resolver=resolver)
    assert address == ipaddress.ip_address("10.1.1.1")


async def test_a_name_that_does_not_resolve_is_host_not_found() -> None:
    with pytest.raises(NameNotResolved) as missing:
        await resolve_pinned("nowhere.invalid", 80, DEFAULT, resolver=TableResolver({}))
    assert missing.value.code == "nameNotResolved"


async def test_the_system_resolver_judges_a_real_name() -> None:
    with pytest.raises(NonPublicAddress):
        await resolve_pinned("localhost.", 80, DEFAULT)
    loopback = ipaddress.ip_address("127.0.0.1")
    policy = PublicOnlyPolicy(allowed_names=frozenset({"localhost"}))
    assert await resolve_pinned("localhost", 80, policy) in {loopback, ipaddress.ip_address("::1")}
    assert loopback == await resolve_pinned(
        "127.0.0.1", 9, PublicOnlyPolicy(allowed_endpoints=frozenset({(loopback, 9)}))
    )
