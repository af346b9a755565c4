"""The peers a host held through a break in its link, checked against access as it is now.

A revocation goes down the links that are up when it is made, and nothing sends it again:
a host whose link was down never heard it, and the peers it named kept working. As its
link begins, a host lists the peers it holds (``peers-check``); the hub answers a
revocation for every one whose session has ended, or whose role in its team is no longer
the one its ticket carried (none: removed).
"""

from __future__ import annotations

from collections.abc import Sequence

from server.common.clock import Clock
from server.common.protocol.link import HeldPeer, LinkRevoke
from server.hub.services.sessions import SessionService
from server.hub.services.teams import TeamService

# As many sessions as one revocation names (the size the bus's announcements use).
_SLICE = 50


class PeerChecks:
    """Which of a host's peers lost their access while its link was down."""

    def __init__(self, sessions: SessionService, teams: TeamService, clock: Clock) -> None:
        self._sessions = sessions
        self._teams = teams
        self._clock = clock

    async def revocations(self, held: Sequence[HeldPeer]) -> list[LinkRevoke]:
        """The revocations that end the peers of ``held`` whose access has ended."""
        now = self._clock.now()
        ended = [
            session_hash
            for session_hash in sorted({p.session_hash for p in held})
            if not await self._sessions.is_live(session_hash)
        ]
        revokes = [
            LinkRevoke(
                session_hashes=ended[start : start + _SLICE],
                code="sessionEnded",
                reason="the session ended",
                revoked_at=now,
            )
            for start in range(0, len(ended), _SLICE)
        ]
        for team_id, account_id, role in sorted({(p.team_id, p.account_id, p.role) for p in held}):
            current = await self._teams.role_of(team_id, account_id)
            if current == role:
                continue
            removed = current is None
            revokes.append(
                LinkRevoke(
                    team_id=team_id,
                    account_id=account_id,
                    code="removedFromTeam" if removed else "roleChanged",
                    reason="removed from the team" if removed else "the role changed",
                    revoked_at=now,
                )
            )
        return revokes
