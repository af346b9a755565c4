"""Which gated tools belong to which family, and what an agent's permissions say of each.

A gated tool waits for a member's consent unless the agent's permissions
auto-approve its family. A family an agent's permissions do not name asks.
"""

from __future__ import annotations

from typing import Literal

Permission = Literal["ask", "auto-approve"]

# Every gated tool of the catalog, by family (a test keeps this complete).
FAMILY_OF_TOOL: dict[str, str] = {
    "click": "browser-input",
    "type": "browser-input",
    "press": "browser-input",
    "select_option": "browser-input",
    "set_checked": "browser-input",
    "fill_fields": "browser-input",
    "open": "browser-navigation",
    "open_tab": "browser-navigation",
    "navigate": "browser-navigation",
    "evaluate": "browser-script",
    "execute_script": "browser-script",
    # A script runs input and navigation steps too: it needs those families as well.
    "run_script": "browser-script",
    "handle_dialog": "browser-dialog",
    "fill_from_vault": "browser-vault",
}
FAMILIES: tuple[str, ...] = tuple(sorted(set(FAMILY_OF_TOOL.values())))


def known_families(value: dict[str, str]) -> dict[str, str]:
    """A validator for permissions: every family named is one of ``FAMILIES``."""
    unknown = sorted(set(value) - set(FAMILIES))
    if unknown:
        raise ValueError(f"unknown tool families {unknown}; known: {list(FAMILIES)}")
    return value


# Gated tools that also need other families auto-approved to run without asking.
ALSO_NEEDS: dict[str, tuple[str, ...]] = {
    "run_script": ("browser-input", "browser-navigation"),
}


def auto_approved(permissions: dict[str, str], tool: str) -> bool:
    """Whether a gated ``tool`` runs without asking under these permissions."""
    family = FAMILY_OF_TOOL.get(tool)
    if family is None:
        return False
    families = (family, *ALSO_NEEDS.get(tool, ()))
    return all(permissions.get(name) == "auto-approve" for name in families)
