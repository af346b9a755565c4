"""The peers a host held through a break in its link, checked against access as it is now.

A revocation goes down the links that are up when it is made, and nothing sends it again:
a host whose link was down never heard it, and the peers it named kept working. As its
link begins, a host lists the peers it holds (``peers-check``); the hub answers a
revocation for every one whose session has ended, or whose role in its team is no longer
the one its ticket carried (none: removed). It lists the members its data names too
(``members-check``: routines' creators, approvers and audience, email choices), and the hub
answers a removal for each who is no longer a member, or whose membership began after
the host's data named them (removed and invited back meanwhile), so what the host keeps of
them goes as it would have with the removal itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.common.clock import Clock
from server.common.protocol.link import HeldPeer, LinkRevoke, NamedMember
from server.hub.services.sessions import SessionService
from server.hub.services.teams import TeamService

# As many sessions as one revocation names (the size the bus's announcements use).
_SLICE = 50
# How far a host's reckoning of the hub's clock may be off (the welcome's time on its way):
# a membership that began within this of the data naming it is taken for the same one.
CLOCK_MARGIN_SECONDS = 10.0


class PeerChecks:
    """Which of a host's peers, and of the members its data names, lost their access while
    its link was down. A host that serves one team hears only of that team's."""

    def __init__(self, sessions: SessionService, teams: TeamService, clock: Clock) -> None:
        self._sessions = sessions
        self._teams = teams
        self._clock = clock

    async def revocations(
        self, held: Sequence[HeldPeer], serves: str | None = None
    ) -> list[LinkRevoke]:
        """The revocations that end the peers of ``held`` whose access has ended (of the
        team ``serves`` alone, for a host that serves one)."""
        now = self._clock.now()
        held = [p for p in held if serves is None or p.team_id == serves]
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

    async def removals(
        self, named: Sequence[NamedMember], serves: str | None = None
    ) -> list[LinkRevoke]:
        """A ``removedFromTeam`` revocation for each of ``named`` who is no longer a member
        of their team (of the team ``serves`` alone, for a host that serves one), or whose
        membership began after the host's data named them: they were removed and came back
        while the link was down, and what the host keeps of them is their former
        membership's."""
        now = self._clock.now()
        # By team, each member with the earliest time the data names them (None: a host of
        # an earlier release, which cannot tell one membership from another).
        by_team: dict[str, dict[str, float | None]] = {}
        for member in named:
            if serves is not None and member.team_id != serves:
                continue
            team = by_team.setdefault(member.team_id, {})
            known = team.get(member.account_id, member.named_since)
            if known is None or member.named_since is None:
                team[member.account_id] = None
            else:
                team[member.account_id] = min(known, member.named_since)
        revokes = []
        for team_id, members in sorted(by_team.items()):
            joined = await self._teams.members_since(team_id, sorted(members))
            for account_id, since in sorted(members.items()):
                began = joined.get(account_id)
                came_back = (
                    began is not None and since is not None and began > since + CLOCK_MARGIN_SECONDS
                )
                if began is None or came_back:
                    revokes.append(
                        LinkRevoke(
                            team_id=team_id,
                            account_id=account_id,
                            code="removedFromTeam",
                            reason="removed from the team",
                            revoked_at=now,
                        )
                    )
        return revokes
