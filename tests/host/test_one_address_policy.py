"""One address policy for every way out of the host: the same table of forms through the
browsers' policy, their PAC script's rows, the filtering proxy, web_fetch, a proxy's own
address, a member's egress dialer and a team webhook's sender, each refusing every form
with the same rule."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import struct

import pytest

from peer.egress import TargetDialer
from server.common.browser_address_policy import (
    BLOCKS,
    AddressPolicy,
    AddressRefused,
    IPAddress,
    Rule,
    block_of,
)
from server.common.egress import Refusal, StreamRefused
from server.common.public_addresses import PublicOnlyPolicy, resolve_pinned
from server.host.agents.team_webhook_sender import WebhookSender
from server.host.browser.address_guard import AddressGuard
from server.host.proxies.addresses import ProxyAddress
from server.host.proxies.judge import ProxyAddressJudge, ProxyAddressRefused
from server.host.web.fetcher import WebFetcher
from tests.common.test_egress import pair
from tests.support.resolvers import TableResolver

# Stands for one of the host's own interface addresses: public, so only the host rule
# refuses it.
OWN = ipaddress.ip_address("198.51.99.7")

# Every form of a non-public address, and the rule that refuses it.
FORMS: tuple[tuple[str, Rule], ...] = (
    ("127.0.0.1", "loopback"),
    ("127.9.8.7", "loopback"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::127.0.0.1", "loopback"),  # IPv4-compatible
    ("64:ff9b::7f00:1", "loopback"),  # NAT64
    ("2002:7f00:1::", "loopback"),  # 6to4
    ("169.254.169.254", "link-local"),
    ("::ffff:169.254.169.254", "link-local"),
    ("64:ff9b::a9fe:a9fe", "link-local"),
    ("fe80::1", "link-local"),
    ("0.0.0.0", "unspecified"),  # noqa: S104 - an address judged, not bound
    ("::", "unspecified"),
    ("10.1.2.3", "private"),
    ("172.16.0.9", "private"),
    ("192.168.1.1", "private"),
    ("2002:c0a8:101::1", "private"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("100.64.0.1", "reserved"),  # shared address space (CGNAT)
    ("192.0.2.1", "reserved"),  # documentation
    ("198.51.100.1", "reserved"),
    ("203.0.113.1", "reserved"),
    ("198.18.0.1", "reserved"),  # benchmarking
    ("192.0.0.9", "reserved"),
    ("224.0.0.1", "reserved"),
    ("240.0.0.1", "reserved"),
    ("::10.0.0.1", "private"),
    ("::8.8.8.8", "reserved"),  # IPv4-compatible is deprecated, whatever it carries
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "reserved"),  # Teredo
    ("2001:db8::1", "reserved"),
    ("64:ff9b:1::808:808", "reserved"),
    ("fec0::1", "reserved"),
    ("ff02::1", "reserved"),
    ("4000::1", "reserved"),
    (str(OWN), "host"),
    (f"::ffff:{OWN}", "host"),
)
PUBLIC = ("8.8.8.8", "93.184.216.34", "::ffff:8.8.8.8", "64:ff9b::808:808", "2606:4700::1111")
BROWSERS = AddressPolicy(own_addresses=frozenset({OWN}))
DIALS = PublicOnlyPolicy(own_addresses=frozenset({OWN}))


def _url_host(text: str) -> str:
    return f"[{text}]" if ":" in text else text


@pytest.mark.parametrize(("text", "rule"), FORMS)
def test_the_browsers_and_every_dial_refuse_each_form(text: str, rule: Rule) -> None:
    address = ipaddress.ip_address(text)
    assert BROWSERS.check_address(address) == rule
    assert BROWSERS.check_host(_url_host(text)) == rule
    assert BROWSERS.check_host("rebound.example", ["8.8.8.8", text]) == rule
    assert not DIALS.permits(address, 443)


@pytest.mark.parametrize("text", PUBLIC)
def test_public_addresses_pass_everywhere(text: str) -> None:
    address = ipaddress.ip_address(text)
    assert BROWSERS.check_address(address) is None
    assert DIALS.permits(address, 443)


def _is_in_net_ex(address: str, prefix: str) -> bool:
    """Chromium's ``isInNetEx`` for the PAC script: across families an IPv4 address or
    prefix is its IPv4-mapped IPv6 form."""
    ip = ipaddress.ip_address(address)
    network = ipaddress.ip_network(prefix)
    if ip.version != network.version:
        if isinstance(ip, ipaddress.IPv4Address):
            ip = ipaddress.IPv6Address(f"::ffff:{ip}")
        else:
            v4 = network.network_address
            network = ipaddress.IPv6Network(f"::ffff:{v4}/{96 + network.prefixlen}")
    return ip in network


async def test_the_pac_script_is_given_the_policys_own_rows_and_judges_alike() -> None:
    policy = AddressPolicy.from_entries(["127.0.0.8/30"], own_addresses=[OWN])
    async with AddressGuard(policy) as guard:
        given = guard.pac_policy()
        listeners = {f"refusal.crewhost.invalid:{port}": rule for rule, port in guard.ports.items()}
        source = guard._pac_script()
    rows = given["rows"]
    assert [network for network, _ in rows] == [str(row.network) for row in policy.rows]
    texts = [text for text, _ in FORMS] + list(PUBLIC) + ["127.0.0.9", "::ffff:127.0.0.9"]
    # And one address inside every block of the table, so no row can drift unseen.
    texts += [str(block.network.network_address + 1) for block in BLOCKS]
    for text in texts:
        listener = next((lst for net, lst in rows if _is_in_net_ex(text, net)), None)
        assert (listeners[listener] if listener else None) == policy.check_address(text), text
    assert json.dumps(given) in source
    assert "isInNetEx(address, POLICY.rows[i][0])" in source


def test_every_block_has_a_rule_or_is_public_by_name() -> None:
    for block in BLOCKS:
        found = block_of(block.network.network_address)
        assert found is not None
        assert block.rule is not None or block.name in {"IPv4-mapped", "NAT64", "global unicast"}


async def _through_socks5(port: int, address: IPAddress) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"\x05\x01\x00")
        assert await reader.readexactly(2) == b"\x05\x00"
        kind = b"\x01" if address.version == 4 else b"\x04"
        writer.write(b"\x05\x01\x00" + kind + address.packed + struct.pack("!H", 80))
        reply = await reader.readexactly(4)
        await reader.readexactly((4 if reply[3] == 1 else 16) + 2)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        return await reader.read()
    finally:
        writer.close()


async def test_the_filtering_proxy_refuses_each_form() -> None:
    async with AddressGuard(BROWSERS) as guard:
        await guard.start_proxy()
        for text, rule in FORMS:
            address = ipaddress.ip_address(text)
            answer = await _through_socks5(guard.proxy.port, address)
            assert f"X-Crewhost-Refused: {rule}".encode() in answer, text
            assert guard.proxy.refused_rule(str(address), 80) == rule, text


async def test_web_fetch_refuses_each_form() -> None:
    fetcher = WebFetcher(DIALS)
    for text, rule in FORMS:
        with pytest.raises(AddressRefused) as refused:
            await fetcher.fetch(f"http://{_url_host(text)}/")
        assert refused.value.rule == rule, text


async def test_a_proxy_at_each_form_is_refused_and_names_its_block() -> None:
    judge = ProxyAddressJudge(DIALS, TableResolver({}))
    for text, _rule in FORMS:
        proxy = ProxyAddress("http", text, 3128)
        with pytest.raises(ProxyAddressRefused) as refused:
            await judge.check(proxy)
        assert refused.value.code == "proxyAddressRefused"
        block = block_of(ipaddress.ip_address(text))
        named = "this host's own address" if text.endswith(str(OWN)) else block and block.name
        assert f"is {named}, not a public address" in refused.value.message, text
        with pytest.raises(ProxyAddressRefused):
            await judge.pinned(proxy)


async def test_a_team_webhook_refuses_each_form_when_sending() -> None:
    sender = WebhookSender(DIALS, TableResolver({}))
    for text, rule in FORMS:
        with pytest.raises(AddressRefused) as refused:
            await sender.judge(f"https://{_url_host(text)}/services/token")
        assert refused.value.rule == rule, text
        outcome = await sender.send(f"http://{_url_host(text)}/", {}, "{}")
        assert (outcome.status, outcome.final) == (None, True), text


async def test_a_member_egress_refuses_each_form() -> None:
    resolver = TableResolver({})
    dialer = TargetDialer(PublicOnlyPolicy(), resolver)
    async with pair(dialer.dial) as joined:
        for text, rule in FORMS:
            if rule == "host":
                continue  # the member's computer knows its own addresses, not the host's
            with pytest.raises(StreamRefused) as caught:
                await joined.host.open(text, 80)
            assert caught.value.reason == Refusal.POLICY, text
    for text, _rule in FORMS:
        with pytest.raises(AddressRefused):
            await resolve_pinned(text, 80, DIALS, resolver=resolver)
    assert resolver.asked == []
