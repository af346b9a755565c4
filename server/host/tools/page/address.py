"""What an agent types into ``navigate`` or ``open``, resolved the way a browser address bar does.

An agent is refused exactly what a person would be: a local file, the browser's own
pages, script and inline-document addresses stay refused, and an address that
belongs to another application (``mailto:``, ``tel:``, a store or chat link) is
refused rather than handed to that application. Anything that is not an address
becomes a search.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote_plus, urlsplit

from server.host.tools.base import ToolFailure

MAX_ADDRESS_CHARS = 8192
BLANK = "about:blank"

# Schemes a page may be loaded from.
WEB_SCHEMES = frozenset({"http", "https"})
# Schemes of the browser itself, of the disk, or that carry a whole document or script:
# a person cannot reach them from the address bar of a managed tab, and neither can an agent.
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

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_HOST_AND_PORT = re.compile(r"^([^\s/?#:]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?([/?#].*)?$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9\-]{1,63}(?<!-)$")
_TOP_LABEL = re.compile(r"^[A-Za-z]{2,63}$|^xn--[A-Za-z0-9\-]{2,59}$")


@dataclass(frozen=True)
class ResolvedAddress:
    """Where a typed address leads: a web address as typed, or a search for the phrase."""

    kind: Literal["url", "search"]
    url: str


def resolve_address(typed: str, search_url: str) -> ResolvedAddress:
    """Resolves ``typed`` like an address bar; raises ``ToolFailure`` for what one refuses.

    ``search_url`` holds ``{query}`` where the encoded phrase goes.
    """
    text = typed.strip()
    if not text:
        raise ToolFailure("emptyAddress", "give an address or a search phrase")
    if len(text) > MAX_ADDRESS_CHARS:
        raise ToolFailure(
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
        parts = urlsplit(text)
        if not parts.hostname:
            raise ToolFailure("invalidAddress", f"the address {text!r} names no host")
        return text
    if scheme in REFUSED_SCHEMES:
        raise ToolFailure(
            "addressRefused",
            f"{scheme}: addresses cannot be opened in an agent's tab; use an http or https address",
        )
    raise ToolFailure(
        "externalAppRefused",
        f"{scheme}: addresses belong to another application and are not opened; "
        "tell the user the address instead",
    )


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)


def _host_part(text: str) -> str | None:
    """The host when ``text`` is a scheme-less address (``example.com/a``, ``localhost:8080``)."""
    match = _HOST_AND_PORT.match(text)
    if match is None:
        return None
    host = match.group(1)
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
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        return None
    if not _TOP_LABEL.match(labels[-1]):
        return None
    return host


def _with_scheme(text: str) -> str:
    """https for a named host; http for loopback and address literals, which rarely serve TLS."""
    host = _host_part(text) or ""
    bare = host.strip("[]")
    local = host.lower() == "localhost"
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        local = True
    return ("http://" if local else "https://") + text


def _search(phrase: str, search_url: str) -> ResolvedAddress:
    if not phrase:
        raise ToolFailure("emptyAddress", "give an address or a search phrase")
    return ResolvedAddress("search", search_url.replace("{query}", quote_plus(phrase)))
