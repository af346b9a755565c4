"""Webhook triggers as both ends of the link see them: a hook's filters and secrets.

A sender signs each delivery the Standard Webhooks way; the hub checks it and keeps
the delivery until the host that owns the hook takes it. Filters look at the JSON
body: every ``equals`` must hold and, when ``eventTypes`` is set, the body's event
type field must be one of them. A field that is not there never matches.
"""

from __future__ import annotations

import base64
import secrets
from typing import Annotated, Any, Final

from pydantic import Field, StringConstraints

from server.common.wire import InboundModel

HOOK_PATH: Final = "/v1/hooks/{hook_id}"
MAX_HOOK_BODY: Final = 256 * 1024
SECRET_PREFIX: Final = "whsec_"  # noqa: S105 - the format's prefix, not a secret
MAX_FILTERS: Final = 20

FieldPath = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^.]+(\.[^.]+)*$")
]
# A number in a filter is a whole number JSON carries exactly (0 to 2^53 - 1).
FilterNumber = Annotated[int, Field(ge=0, le=2**53 - 1)]
FilterValue = Annotated[str, StringConstraints(max_length=500)] | FilterNumber | bool | None


class FieldEquals(InboundModel):
    """The body's field at ``path`` (dots between names, as ``data.action``) equals ``value``."""

    path: FieldPath
    value: FilterValue


class HookFilters(InboundModel):
    """What a delivery's body must hold to start a run; empty filters pass everything."""

    equals: list[FieldEquals] = Field(default_factory=list, max_length=MAX_FILTERS)
    event_types: list[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=MAX_FILTERS
    )
    event_type_field: FieldPath = "type"

    @property
    def empty(self) -> bool:
        return not self.equals and not self.event_types

    def passes(self, body: Any) -> bool:
        """Whether a parsed JSON body passes (``body`` is ``MISSING`` for one that is not JSON)."""
        if self.empty:
            return True
        for rule in self.equals:
            found = field_at(body, rule.path)
            if found is MISSING or found != rule.value or type(found) is not type(rule.value):
                return False
        if self.event_types:
            found = field_at(body, self.event_type_field)
            if not isinstance(found, str) or found not in self.event_types:
                return False
        return True


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def field_at(body: Any, path: str) -> Any:
    """The value at a dotted path of a JSON object, or ``MISSING``."""
    for name in path.split("."):
        if not isinstance(body, dict) or name not in body:
            return MISSING
        body = body[name]
    return body


class HookSecret(InboundModel):
    """A signing secret (``whsec_`` and base64) and until when it is valid (None: no end)."""

    secret: Annotated[str, StringConstraints(min_length=8, max_length=128)]
    valid_until: float | None = None


def new_secret() -> str:
    """A signing secret as Standard Webhooks writes one: ``whsec_`` and 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")
