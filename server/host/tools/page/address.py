"""What an agent types into ``navigate`` or ``open``, resolved the way a browser address bar does.

The resolution is the one a person's address bar uses (``browser.typed_address``), so an
agent is refused exactly what a person would be; this module only words the refusals for
the agent.
"""

from __future__ import annotations

from server.host.browser.typed_address import (
    BLANK,
    MAX_ADDRESS_CHARS,
    REFUSED_SCHEMES,
    WEB_SCHEMES,
    ResolvedAddress,
    TypedAddressRefused,
    resolve_typed_address,
)
from server.host.tools.results import ToolFailure

__all__ = [
    "BLANK",
    "MAX_ADDRESS_CHARS",
    "REFUSED_SCHEMES",
    "WEB_SCHEMES",
    "ResolvedAddress",
    "resolve_address",
]


def resolve_address(typed: str, search_url: str) -> ResolvedAddress:
    """Resolves ``typed`` like an address bar; raises ``ToolFailure`` for what one refuses.

    ``search_url`` holds ``{query}`` where the encoded phrase goes.
    """
    try:
        return resolve_typed_address(typed, search_url)
    except TypedAddressRefused as refused:
        raise ToolFailure(refused.code, _for_the_agent(refused)) from None


def _for_the_agent(refused: TypedAddressRefused) -> str:
    if refused.code == "addressRefused":
        return (
            f"{refused.scheme}: addresses cannot be opened in an agent's tab; "
            "use an http or https address"
        )
    if refused.code == "externalAppRefused":
        return (
            f"{refused.scheme}: addresses belong to another application and are not opened; "
            "tell the user the address instead"
        )
    return refused.message
