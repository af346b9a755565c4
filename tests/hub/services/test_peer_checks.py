"""The hub's answer to the members a host's data names as its link begins: a removal for
each who left, and for each whose membership began after the data named them (they left
and came back while the link was down)."""

from __future__ import annotations

from server.common.protocol.link import NamedMember
from server.hub.services.peer_checks import CLOCK_MARGIN_SECONDS, PeerChecks
from tests.support.clock import FakeClock
from tests.support.hub_server import RunningHub


async def test_removals_tell_a_former_membership_from_the_present_one(
    server: RunningHub, clock: FakeClock
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    stayed = await server.invite(owner, team_id, "stayed@example.com", "member")
    joined_at = clock.now()
    left = await server.invite(owner, team_id, "left@example.com", "member")
    assert (await owner.delete(f"/v1/teams/{team_id}/members/{left.account_id}")).status == 204
    assert stayed.account_id is not None
    stayed_id = stayed.account_id
    checks = PeerChecks(server.hub.sessions, server.hub.teams, clock)

    async def removed(account_id: str | None, named_since: float | None) -> bool:
        assert account_id is not None
        named = NamedMember(team_id=team_id, account_id=account_id, named_since=named_since)
        revokes = await checks.removals([named])
        assert all(r.code == "removedFromTeam" for r in revokes)
        return [r.account_id for r in revokes] == [account_id]

    # One who left is removed, whenever the data named them, or if the host cannot say.
    assert await removed(left.account_id, None)
    assert await removed(left.account_id, joined_at)
    # One still a member: named in the present membership, or by a host that cannot say.
    assert not await removed(stayed.account_id, None)
    assert not await removed(stayed.account_id, joined_at + 30)
    # Named within the margin of the host's reckoning of the hub's clock: the same one.
    assert not await removed(stayed.account_id, joined_at - CLOCK_MARGIN_SECONDS / 2)
    # Named well before the membership began: a former membership's data.
    assert await removed(stayed.account_id, joined_at - CLOCK_MARGIN_SECONDS * 2)
    # The earliest naming counts, and a host that cannot say for one entry cannot for all.
    both = [
        NamedMember(team_id=team_id, account_id=stayed_id, named_since=joined_at + 30),
        NamedMember(team_id=team_id, account_id=stayed_id, named_since=joined_at - 60),
    ]
    assert [r.account_id for r in await checks.removals(both)] == [stayed.account_id]
    unsure = [*both, NamedMember(team_id=team_id, account_id=stayed_id)]
    assert await checks.removals(unsure) == []
    # A host that serves another team hears nothing of this one's.
    assert await checks.removals(both, serves="f" * 32) == []
