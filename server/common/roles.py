"""Team roles and their order."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """A member's role in one team; each role can do what the ones below it can."""

    MEMBER = "member"
    ADMIN = "admin"
    OWNER = "owner"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def at_least(self, other: Role) -> bool:
        return self.rank >= other.rank


_RANKS = {Role.MEMBER: 0, Role.ADMIN: 1, Role.OWNER: 2}
