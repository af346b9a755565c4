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

    def may_invite(self, role: Role) -> bool:
        """Whether a member with this role may invite someone as ``role``.

        Admins invite; nobody invites above their own role (only an owner invites an owner).
        An invitation stays usable only while its creator still may.
        """
        return self.at_least(Role.ADMIN) and self.at_least(role)


_RANKS = {Role.MEMBER: 0, Role.ADMIN: 1, Role.OWNER: 2}
