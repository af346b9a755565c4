"""The browser address policy: what is refused by default, what the settings change."""

from __future__ import annotations

import pytest

from server.common.browser_address_policy import AddressPolicy, AddressRefused, parse_allowed_host

DEFAULT = AddressPolicy()


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("127.0.0.1", "loopback"),
        ("127.45.6.7", "loopback"),
        ("::1", "loopback"),
        ("[::1]", "loopback"),
        ("[::ffff:127.0.0.1]", "loopback"),
        ("localhost", "loopback"),
        ("LocalHost.", "loopback"),
        ("app.localhost", "loopback"),
        ("169.254.169.254", "link-local"),
        ("[fe80::1]", "link-local"),
        ("[::ffff:169.254.169.254]", "link-local"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - an address judged, not bound
        ("[::]", "unspecified"),
    ],
)
def test_loopback_link_local_and_unspecified_are_refused_by_default(host: str, rule: str) -> None:
    assert DEFAULT.check_host(host) == rule
    assert not DEFAULT.needs_resolving(host)


@pytest.mark.parametrize("host", ["10.1.2.3", "172.16.0.9", "192.168.1.1", "[fd00::1]"])
def test_private_addresses_are_refused_unless_set_otherwise(host: str) -> None:
    assert DEFAULT.check_host(host) == "private"
    assert AddressPolicy(refuse_private=False).check_host(host) is None


@pytest.mark.parametrize("host", ["93.184.216.34", "[2606:4700::1111]", "172.32.0.1"])
def test_public_addresses_are_allowed(host: str) -> None:
    assert AddressPolicy(refuse_private=True).check_host(host) is None


def test_a_name_is_judged_by_every_address_it_resolves_to() -> None:
    assert DEFAULT.needs_resolving("intranet.example")
    assert DEFAULT.check_host("intranet.example", ["93.184.216.34"]) is None
    assert DEFAULT.check_host("rebound.example", ["93.184.216.34", "127.0.0.1"]) == "loopback"
    assert DEFAULT.check_host("meta.example", ["169.254.169.254"]) == "link-local"
    assert DEFAULT.check_host("unresolved.example", []) is None


def test_the_allow_list_takes_names_addresses_and_ranges() -> None:
    policy = AddressPolicy.from_entries(
        [" 127.0.0.1", "LOCALHOST", "dev.internal.", "169.254.0.0/16"], refuse_private=True
    )
    assert policy.check_host("127.0.0.1") is None
    assert policy.check_host("[::ffff:127.0.0.1]") is None
    assert policy.check_host("127.0.0.2") == "loopback"
    assert policy.check_host("localhost") is None
    assert policy.check_host("app.localhost") == "loopback"
    assert policy.check_host("169.254.169.254") is None
    # A listed name is not resolved; another name resolving to a listed address passes too.
    assert not policy.needs_resolving("dev.internal")
    assert policy.check_host("dev.internal", ["10.0.0.5"]) is None
    assert policy.check_host("other.internal", ["127.0.0.1"]) is None
    assert policy.check_host("other.internal", ["10.0.0.5"]) == "private"


@pytest.mark.parametrize(
    ("entry", "parsed"),
    [
        ("Example.COM", "example.com"),
        ("[::1]", "::1/128"),
        ("10.1.2.3/8", "10.0.0.0/8"),
        ("fe80::/10", "fe80::/10"),
    ],
)
def test_allow_list_entries_are_normalized(entry: str, parsed: str) -> None:
    assert str(parse_allowed_host(entry)) == parsed


@pytest.mark.parametrize(
    "entry", ["http://localhost", "localhost:3000", "10.0.0.0/33", "1.2.3", "a b", "", "-x."]
)
def test_allow_list_entries_that_are_no_host_are_refused(entry: str) -> None:
    with pytest.raises(ValueError, match="is not a host name, an IP address or a CIDR range"):
        parse_allowed_host(entry)


def test_a_refusal_names_the_address_the_rule_and_the_setting() -> None:
    refused = AddressRefused("http://127.0.0.1:8750/v1/teams", "loopback")
    assert refused.code == "addressRefused"
    assert refused.status == 403
    assert refused.message == (
        "Crewhost refused http://127.0.0.1:8750/v1/teams: loopback addresses are blocked for "
        "browsers on this host (setting browser_allowed_hosts)"
    )
    private = AddressRefused("http://10.0.0.5/", "private")
    assert private.message.endswith("(settings browser_refuse_private, browser_allowed_hosts)")
