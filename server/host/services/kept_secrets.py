"""A saved secret kept through an edit only while it goes where it went.

A form shows a saved secret (a proxy's password, a mail server's, an MCP server's headers,
environment or OAuth client secret, a vault login's password) as a mask, and a save that
leaves the mask keeps it.
A save that also moves where the secret is sent (another host, no encryption where there
was, another command) would hand it to whoever is there, which the person saving may
control without ever having seen the secret: such a save must give the secret again, or
clear it. Another port of the same host keeps it; a vault login's secrets go to its
sites, and a site added is another origin. (A provider's key, set apart from its address,
is cleared instead when the provider moves to another origin: ``providers``.)
"""

from __future__ import annotations

from server.common.errors import InvalidArgument


def refuse_moved(field: str, moved: str) -> None:
    """``secretNeedsReentry`` for a kept secret whose destination moved (``moved``: what
    changed, in words)."""
    raise InvalidArgument(
        f"field '{field}': {moved} changed, and the saved secret goes only where it went: "
        "enter it again, or clear it",
        code="secretNeedsReentry",
        field=field,
    )
