"""A saved secret kept through an edit only while it goes where it went.

A form shows a saved secret (a proxy's password, a mail server's, an MCP server's headers,
environment or OAuth client secret, a vault login's password) as a mask, and a save that
leaves the mask keeps it.
A save that also moves where the secret is sent (another host, no encryption where there
was, another command) would hand it to whoever is there, which the person saving may
control without ever having seen the secret: such a save must give the secret again, or
clear it. Another port of the same host keeps it; a vault login's secrets go to its
sites, and a site added is another origin.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from server.common.errors import InvalidArgument


def origin_of(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of ``url``, the port filled in for http and https."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return (
        scheme,
        (parts.hostname or "").lower(),
        parts.port or {"http": 80, "https": 443}.get(scheme),
    )


def refuse_moved(field: str, moved: str) -> None:
    """``secretNeedsReentry`` for a kept secret whose destination moved (``moved``: what
    changed, in words)."""
    raise InvalidArgument(
        f"field '{field}': {moved} changed, and the saved secret goes only where it went: "
        "enter it again, or clear it",
        code="secretNeedsReentry",
        field=field,
    )
