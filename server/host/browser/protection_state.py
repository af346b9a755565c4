"""The phases of a tab's protection in secure entry (``Tab.protection``).

Only ``browser.protection`` moves a tab between them, and each move publishes
``ProtectionChanged``; every reader (the access rules, the live view, the tools) reads
the phase.
"""

from __future__ import annotations

import enum


class Protection(enum.Enum):
    """``NONE``: no secret in the tab. ``ENTERING``: a secret goes in and is submitted.
    ``KEPT``: the page stayed after a submit and shows no value (scripts stay refused until
    a new document). ``TAKEOVER``: a failed entry left the page emptied of the secret for a
    person to take over."""

    NONE = "none"
    ENTERING = "entering"
    KEPT = "kept"
    TAKEOVER = "takeover"

    @property
    def holds_secret(self) -> bool:
        """Whether the tab is in secure entry at all."""
        return self is not Protection.NONE

    @property
    def watchable(self) -> bool:
        """Whether the person holding the tab may watch and steer it: no secret shows."""
        return self in (Protection.KEPT, Protection.TAKEOVER)
