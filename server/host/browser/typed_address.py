"""What someone types into an address bar, resolved the way Chrome's omnibox does.

Both a person's address bar (browser control) and an agent's ``navigate`` and ``open``
tools use it, so what a person may open an agent may open, and the same words reach the
same page. A scheme-less host is given one (http for loopback, address literals and
single-label intranet names, which rarely serve TLS; https otherwise); the browser's own
pages, the disk and script or inline-document addresses are refused; an address that
belongs to another application (``mailto:``, ``tel:``, a store or chat link) is refused
rather than handed to it; anything that is not an address becomes a search.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote_plus, urlsplit

MAX_ADDRESS_CHARS = 8192
BLANK = "about:blank"

# Schemes a page may be loaded from.
WEB_SCHEMES = frozenset({"http", "https"})
# Schemes of the browser itself, of the disk, or that carry a whole document or script:
# nobody reaches them from the address bar of a managed tab.
REFUSED_SCHEMES = frozenset(
    {
        "about",
        "blob",
        "chrome",
        "chrome-extension",
        "chrome-search",
        "chrome-untrusted",
        "data",
        "devtools",
        "edge",
        "file",
        "filesystem",
        "ftp",
        "javascript",
        "view-source",
        "ws",
        "wss",
    }
)
# Schemes of other applications whose addresses may look like ``name:digits``.
_APP_SCHEMES = frozenset({"callto", "fax", "mailto", "sms", "tel", "urn"})

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_HOST_AND_PORT = re.compile(r"^([^\s/?#:]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?([/?#].*)?$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9\-]{1,63}(?<!-)$")
_TOP_LABEL = re.compile(r"^[A-Za-z]{2,63}$|^xn--[A-Za-z0-9\-]{2,59}$")

TypedAddressCode = Literal[
    "emptyAddress", "addressTooLong", "invalidAddress", "addressRefused", "externalAppRefused"
]


class TypedAddressRefused(Exception):
    """What was typed cannot be opened; ``code`` says why, ``scheme`` names a refused scheme."""

    def __init__(self, code: TypedAddressCode, message: str, *, scheme: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.scheme = scheme


@dataclass(frozen=True)
class ResolvedAddress:
    """Where a typed address leads: a web address, or a search for the phrase."""

    kind: Literal["url", "search"]
    url: str


def resolve_typed_address(typed: str, search_url: str) -> ResolvedAddress:
    """Resolves ``typed`` like an address bar; raises ``TypedAddressRefused`` for what one
    refuses. ``search_url`` holds ``{query}`` where the encoded phrase goes."""
    text = typed.strip()
    if not text:
        raise TypedAddressRefused("emptyAddress", "give an address or a search phrase")
    if len(text) > MAX_ADDRESS_CHARS:
        raise TypedAddressRefused(
            "addressTooLong", f"an address may be at most {MAX_ADDRESS_CHARS} characters"
        )
    if text.startswith("?"):
        # A leading question mark asks for a search, as it does in a browser.
        return _search(text[1:].strip(), search_url)
    if text == BLANK:
        return ResolvedAddress("url", BLANK)
    if not _has_space(text) and _host_part(text) is not None:
        return ResolvedAddress("url", _with_scheme(text))
    scheme = _SCHEME.match(text)
    if scheme is not None:
        name = scheme.group(1).lower()
        # "note: buy milk" is a phrase; "javascript:a b" is still a script address.
        if name in WEB_SCHEMES or name in REFUSED_SCHEMES or not _has_space(text):
            return ResolvedAddress("url", _checked_url(text, name))
    return _search(text, search_url)


def _checked_url(text: str, scheme: str) -> str:
    if scheme in WEB_SCHEMES:
        try:
            host = urlsplit(text).hostname
        except ValueError:  # an unclosed IPv6 bracket, a bad port
            raise TypedAddressRefused(
                "invalidAddress", f"the address {text!r} is not a well-formed address"
            ) from None
        if not host:
            raise TypedAddressRefused("invalidAddress", f"the address {text!r} names no host")
        return text
    if scheme in REFUSED_SCHEMES:
        raise TypedAddressRefused(
            "addressRefused",
            f"{scheme}: addresses cannot be opened in a team's tab; use an http or https address",
            scheme=scheme,
        )
    raise TypedAddressRefused(
        "externalAppRefused",
        f"{scheme}: addresses belong to another application and are not opened",
        scheme=scheme,
    )


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)


def _host_part(text: str) -> str | None:
    """The host when ``text`` is a scheme-less address (``example.com/a``, ``localhost:8080``,
    ``intranet:8080``)."""
    match = _HOST_AND_PORT.match(text)
    if match is None:
        return None
    host, port = match.group(1), match.group(2)
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            return None
        return host
    if host.lower() == "localhost":
        return host
    if "@" in host:
        return None
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        pass
    else:
        return host
    labels = host.rstrip(".").split(".")
    if len(labels) == 1 and port and _LABEL.match(host) and not _is_scheme(host):
        # "name:port" is a host and its port, as Chrome reads it, unless the name is a scheme.
        return host
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        return None
    if not _TOP_LABEL.match(labels[-1]):
        return None
    return host


def _is_scheme(name: str) -> bool:
    lowered = name.lower()
    return lowered in WEB_SCHEMES or lowered in REFUSED_SCHEMES or lowered in _APP_SCHEMES


def _with_scheme(text: str) -> str:
    """https for a public name; http for loopback, address literals and intranet names."""
    host = (_host_part(text) or "").rstrip(".")
    bare = host.strip("[]")
    local = host.lower() == "localhost" or "." not in host
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        local = True
    return ("http://" if local else "https://") + text


def _search(phrase: str, search_url: str) -> ResolvedAddress:
    if not phrase:
        raise TypedAddressRefused("emptyAddress", "give an address or a search phrase")
    return ResolvedAddress("search", search_url.replace("{query}", quote_plus(phrase)))
