"""Proxy address forms: every form people paste, and the refusals with their codes."""

from __future__ import annotations

import pytest

from server.common.errors import InvalidArgument
from server.host.proxies.addresses import (
    NamedAddress,
    ProxyAddress,
    parse_proxy_address,
    proxy_names,
)

A = ProxyAddress

ACCEPTED = [
    ("http://proxy.example.com:8080", A("http", "proxy.example.com", 8080)),
    ("http://proxy.example.com", A("http", "proxy.example.com", 80)),
    ("https://proxy.example.com", A("https", "proxy.example.com", 443)),
    ("socks5://proxy.example.com", A("socks5", "proxy.example.com", 1080)),
    ("SOCKS5://Proxy.Example.COM:1081/", A("socks5", "proxy.example.com", 1081)),
    ("socks5://u:p@10.0.0.2:1080", A("socks5", "10.0.0.2", 1080, "u", "p")),
    ("http://user@proxy.example.com:3128", A("http", "proxy.example.com", 3128, "user")),
    ("http://user:@proxy.example.com:3128", A("http", "proxy.example.com", 3128, "user", "")),
    (
        "http://u:pa/ss#wo@rd@proxy.example.com:8080",
        A("http", "proxy.example.com", 8080, "u", "pa/ss#wo@rd"),
    ),
    ("http://u:a:b@proxy.example.com:8080", A("http", "proxy.example.com", 8080, "u", "a:b")),
    ("http://[2001:db8::1]:8080", A("http", "2001:db8::1", 8080)),
    ("socks5://u:p@[2001:DB8::1]", A("socks5", "2001:db8::1", 1080, "u", "p")),
    ("proxy.example.com:8080", A("http", "proxy.example.com", 8080)),
    ("[::1]:3128", A("http", "::1", 3128)),
    ("user:secret@proxy.example.com:8080", A("http", "proxy.example.com", 8080, "user", "secret")),
    (
        "user:se@cr/et#@proxy.example.com:8080",
        A("http", "proxy.example.com", 8080, "user", "se@cr/et#"),
    ),
    ("proxy.example.com:8080:user:secret", A("http", "proxy.example.com", 8080, "user", "secret")),
    (
        "proxy.example.com:8080:user:se:c@r/e#t",
        A("http", "proxy.example.com", 8080, "user", "se:c@r/e#t"),
    ),
    ("[2001:db8::2]:8080:user:secret", A("http", "2001:db8::2", 8080, "user", "secret")),
    ("  1.2.3.4:8000  ", A("http", "1.2.3.4", 8000)),
]

REFUSED = [
    ("", "browserProxyAddressInvalid"),
    ("   ", "browserProxyAddressInvalid"),
    ("ftp://proxy.example.com:21", "browserProxySchemeUnsupported"),
    ("socks4://proxy.example.com:1080", "browserProxySchemeUnsupported"),
    ("proxy.example.com", "browserProxyPortMissing"),
    ("user:secret@proxy.example.com", "browserProxyPortMissing"),
    ("http://proxy.example.com:0", "browserProxyPortInvalid"),
    ("http://proxy.example.com:65536", "browserProxyPortInvalid"),
    ("http://proxy.example.com:80a", "browserProxyPortInvalid"),
    ("http://proxy.example.com:8080/path", "browserProxyPortInvalid"),
    ("http://2001:db8::1:8080", "browserProxyHostInvalid"),
    ("http://[2001:db8::1:8080", "browserProxyHostInvalid"),
    ("http://[not-v6]:8080", "browserProxyHostInvalid"),
    ("http://[::1]x:8080", "browserProxyHostInvalid"),
    ("http://bad_host:8080", "browserProxyHostInvalid"),
    ("http://-bad.example:8080", "browserProxyHostInvalid"),
    ("http://:8080", "browserProxyHostInvalid"),
    ("http://:secret@proxy.example.com:8080", "browserProxyAddressInvalid"),
    ("http://proxy.exa\nmple.com:8080", "browserProxyAddressInvalid"),
    ("http://pro\x00xy:8080", "browserProxyAddressInvalid"),
    ("http://" + "u" * 256 + ":p@proxy.example.com:1", "browserProxyAddressInvalid"),
    ("http://proxy.example.com:" + "1" * 3000, "browserProxyAddressInvalid"),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_every_form_parses(text: str, expected: ProxyAddress) -> None:
    parsed = parse_proxy_address(text)
    assert parsed == expected
    assert parsed.password == expected.password


@pytest.mark.parametrize(("text", "code"), REFUSED)
def test_bad_forms_are_refused_with_a_code(text: str, code: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        parse_proxy_address(text)
    assert caught.value.code == code
    assert caught.value.field == "address"


@pytest.mark.parametrize(
    "text",
    [
        "http://me:hunter2@tail/x:8080",
        "me:hunter2@tail/x:8080",
        "socks5://me:hunter2@[tail]:1080",
        "me:hunter2@[tail]:1080",
    ],
)
def test_a_bad_host_after_a_sign_in_is_not_quoted(text: str) -> None:
    # The sign-in ends at the last @: a password holding one leaves its tail in the host.
    with pytest.raises(InvalidArgument) as caught:
        parse_proxy_address(text)
    assert caught.value.code == "browserProxyHostInvalid"
    assert "tail" not in str(caught.value)


def test_a_bad_host_without_a_sign_in_is_quoted() -> None:
    with pytest.raises(InvalidArgument) as caught:
        parse_proxy_address("http://bad_host:8080")
    assert "'bad_host'" in str(caught.value)


def test_display_never_holds_the_password() -> None:
    address = parse_proxy_address("socks5://me:hunter2@[2001:db8::1]:1080")
    assert address.display() == "socks5://me@[2001:db8::1]:1080"
    assert "hunter2" not in repr(address)
    assert address.server() == "socks5://[2001:db8::1]:1080"


def test_names_add_port_then_user_then_scheme_when_hosts_collide() -> None:
    proxies = [
        NamedAddress("a", "http", "one.example", 8080, None),
        NamedAddress("b", "http", "two.example", 8080, "x"),
        NamedAddress("c", "http", "two.example", 8081, "x"),
        NamedAddress("d", "http", "three.example", 1, "x"),
        NamedAddress("e", "http", "three.example", 1, "y"),
        NamedAddress("f", "http", "four.example", 1, "x"),
        NamedAddress("g", "socks5", "four.example", 1, "x"),
        NamedAddress("h", "http", "::1", 1, None),
    ]
    assert proxy_names(proxies) == {
        "a": "one.example",
        "b": "two.example:8080",
        "c": "two.example:8081",
        "d": "x@three.example:1",
        "e": "y@three.example:1",
        "f": "http://x@four.example:1",
        "g": "socks5://x@four.example:1",
        "h": "[::1]",
    }
