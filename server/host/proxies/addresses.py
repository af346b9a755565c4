"""Proxy addresses as people paste them, and the names the host gives them.

The forms taken:

* ``scheme://[user[:password]@]host[:port]`` with ``http``, ``https`` or ``socks5``;
  without a port, the scheme's own (80, 443, 1080).
* no scheme: ``http`` with a required port, as ``host:port``, ``user:password@host:port``
  or the sellers' ``host:port:user:password``.

A password may hold a raw ``/``, ``#`` or ``@`` (the sign-in ends at the last ``@``), so
the text is never read as a URL and nothing is percent-decoded. An IPv6 literal is
written in brackets. Every refusal is an ``InvalidArgument`` on ``address`` with a code of
its own.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from server.common.errors import InvalidArgument

SCHEMES = ("http", "https", "socks5")
DEFAULT_PORTS = {"http": 80, "https": 443, "socks5": 1080}
MAX_ADDRESS_LENGTH = 2048
# RFC 1929 sends each of user name and password with a one-byte length.
MAX_CREDENTIAL_LENGTH = 255

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_PORT = re.compile(r"^[0-9]{1,5}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ProxyAddress:
    """One parsed proxy address; ``host`` is lowercase, an IPv6 literal without brackets."""

    scheme: str
    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @property
    def host_text(self) -> str:
        """The host as written in an address (an IPv6 literal in brackets)."""
        return f"[{self.host}]" if ":" in self.host else self.host

    def display(self) -> str:
        """The address without its password: what a list and an edit form show."""
        user = f"{self.username}@" if self.username is not None else ""
        return f"{self.scheme}://{user}{self.host_text}:{self.port}"

    def server(self) -> str:
        """``scheme://host:port``, what Chromium's proxy setting takes."""
        return f"{self.scheme}://{self.host_text}:{self.port}"

    def without_password(self) -> ProxyAddress:
        return ProxyAddress(self.scheme, self.host, self.port, self.username, None)


def _invalid(message: str, *, code: str) -> InvalidArgument:
    return InvalidArgument(message, code=code, field="address")


def parse_proxy_address(text: str) -> ProxyAddress:
    """The address ``text`` names, or ``InvalidArgument`` saying what is wrong with it."""
    text = text.strip()
    if not text:
        raise _invalid("the proxy address is empty", code="browserProxyAddressInvalid")
    if len(text) > MAX_ADDRESS_LENGTH:
        raise _invalid(
            f"a proxy address has at most {MAX_ADDRESS_LENGTH} characters",
            code="browserProxyAddressInvalid",
        )
    if _CONTROL.search(text):
        raise _invalid(
            "a proxy address cannot hold control characters", code="browserProxyAddressInvalid"
        )
    found = _SCHEME.match(text)
    if found is not None:
        scheme = found.group(1).lower()
        if scheme not in SCHEMES:
            raise _invalid(
                f"proxy scheme {scheme!r} is not supported; use http, https or socks5",
                code="browserProxySchemeUnsupported",
            )
        return _with_scheme(scheme, text[found.end() :])
    return _without_scheme(text)


def _with_scheme(scheme: str, rest: str) -> ProxyAddress:
    userinfo, at, hostport = rest.rpartition("@")
    if hostport.endswith("/"):
        hostport = hostport[:-1]  # what a browser adds; any other path is refused below
    host, port = _host_port(hostport, required=False, shown=not at)
    username, password = _credentials(userinfo) if at else (None, None)
    return ProxyAddress(scheme, host, port or DEFAULT_PORTS[scheme], username, password)


def _without_scheme(text: str) -> ProxyAddress:
    userinfo, at, hostport = text.rpartition("@")
    if at:
        try:
            host, port = _host_port(hostport, required=True, shown=False)
        except InvalidArgument:
            seller = _seller_form(text)
            if seller is None:
                raise
            return seller
        username, password = _credentials(userinfo)
        assert port is not None
        return ProxyAddress("http", host, port, username, password)
    seller = _seller_form(text)
    if seller is not None:
        return seller
    host, port = _host_port(text, required=True)
    assert port is not None
    return ProxyAddress("http", host, port)


def _seller_form(text: str) -> ProxyAddress | None:
    """``host:port:user:password`` (the password may hold ``:`` too), or None."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None
        host_text, rest = text[: close + 1], text[close + 1 :]
        if not rest.startswith(":"):
            return None
        parts = rest[1:].split(":", 2)
    else:
        host_text, _, after = text.partition(":")
        parts = after.split(":", 2)
    if len(parts) != 3 or not _PORT.match(parts[0]):
        return None
    host, port = _host_port(f"{host_text}:{parts[0]}", required=True)
    assert port is not None
    username, password = _credentials(f"{parts[1]}:{parts[2]}")
    return ProxyAddress("http", host, port, username, password)


def _credentials(userinfo: str) -> tuple[str, str | None]:
    username, colon, password = userinfo.partition(":")
    if not username:
        raise _invalid("the proxy sign-in has no user name", code="browserProxyAddressInvalid")
    for value in (username, password):
        if len(value.encode("utf-8")) > MAX_CREDENTIAL_LENGTH:
            raise _invalid(
                f"a proxy user name or password has at most {MAX_CREDENTIAL_LENGTH} bytes",
                code="browserProxyAddressInvalid",
            )
    return username, (password if colon else None)


def _host_port(text: str, *, required: bool, shown: bool = True) -> tuple[str, int | None]:
    """Host and port of ``text``; ``shown`` is False when the text followed a sign-in, whose
    password may hold ``@`` and so end up here: the errors then do not quote it."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise _invalid("an IPv6 address needs its closing ]", code="browserProxyHostInvalid")
        host = _ipv6(text[1:close], shown=shown)
        rest = text[close + 1 :]
        if rest and not rest.startswith(":"):
            raise _invalid("unexpected text after the proxy host", code="browserProxyHostInvalid")
        port_text: str | None = rest[1:] if rest else None
    else:
        if text.count(":") > 1:
            raise _invalid(
                "write an IPv6 proxy address in brackets, like [2001:db8::1]:8080",
                code="browserProxyHostInvalid",
            )
        host_part, colon, port_part = text.partition(":")
        host = _host(host_part, shown=shown)
        port_text = port_part if colon else None
    if port_text is None:
        if required:
            raise _invalid(
                "a proxy address without a scheme needs a port, like host:8080",
                code="browserProxyPortMissing",
            )
        return host, None
    if not _PORT.match(port_text) or not 1 <= int(port_text) <= 65535:
        raise _invalid(
            "the proxy port must be a number from 1 to 65535", code="browserProxyPortInvalid"
        )
    return host, int(port_text)


def _ipv6(text: str, *, shown: bool) -> str:
    try:
        return str(ipaddress.IPv6Address(text))
    except ValueError:
        what = repr(text) if shown else "the proxy host"
        raise _invalid(f"{what} is not an IPv6 address", code="browserProxyHostInvalid") from None


def _host(text: str, *, shown: bool) -> str:
    host = text.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host or len(host) > 253 or not all(_LABEL.match(label) for label in host.split(".")):
        what = repr(text) if shown else "the proxy host"
        raise _invalid(f"{what} is not a proxy host name", code="browserProxyHostInvalid")
    return host


@dataclass(frozen=True, slots=True)
class NamedAddress:
    """What a name is made from: an address proxy's parts (no password)."""

    id: str
    scheme: str
    host: str
    port: int
    username: str | None


def proxy_names(proxies: Sequence[NamedAddress]) -> dict[str, str]:
    """Each proxy's name: its host; when proxies share a host, the port, then the user
    name, then the scheme join it until the name tells them apart."""
    names: dict[str, str] = {}
    for proxy in proxies:
        same_host = [p for p in proxies if p.host == proxy.host]
        for level in range(4):
            name = _name(proxy, level)
            if level == 3 or sum(_name(p, level) == name for p in same_host) == 1:
                names[proxy.id] = name
                break
    return names


def _name(proxy: NamedAddress, level: int) -> str:
    host = f"[{proxy.host}]" if ":" in proxy.host else proxy.host
    if level == 0:
        return host
    name = f"{host}:{proxy.port}"
    if level >= 2 and proxy.username is not None:
        name = f"{proxy.username}@{name}"
    if level >= 3:
        name = f"{proxy.scheme}://{name}"
    return name
