"""Each change of access names why in a stable code, which the hosts pass on to peers."""

from __future__ import annotations

from typing import Any

from server.common.error_codes import REVOCATION_CODES
from server.common.protocol.link import LinkRevoke
from server.hub.bus import LocalBus
from server.hub.services.access_changes import AccessChanges
from tests.support.clock import FakeClock

# Ids as the hub mints them (32 hex), which a link message's ids must be.
TEAM, ACCOUNT = "1" * 32, "a" * 32


async def revocations_of(*changes: str) -> list[LinkRevoke]:
    """The revocations announced (on this instance and the bus) by each named change."""
    heard: list[dict[str, Any]] = []

    async def hear(message: dict[str, Any]) -> None:
        heard.append(message)

    bus = LocalBus()
    await bus.start(hear)
    access = AccessChanges(bus, "instance-1", FakeClock())
    for change in changes:
        if change == "sessions_ended":
            await access.sessions_ended(["hash-1"], "the session was signed out")
        elif change == "host_removed":
            await access.host_removed("host-1")
        else:
            await getattr(access, change)(TEAM, ACCOUNT)
    await bus.close()
    return [LinkRevoke.model_validate(m["revoke"]) for m in heard if m["kind"] == "revoke"]


async def test_each_change_names_its_code() -> None:
    revokes = await revocations_of(
        "sessions_ended", "role_changed", "member_removed", "host_removed"
    )
    assert [r.code for r in revokes] == [
        "sessionEnded",
        "roleChanged",
        "removedFromTeam",
        "hostRemoved",
    ]
    # Every cause but the one a host assumes when a hub of an earlier release names none.
    assert {r.code for r in revokes} | {"accessChanged"} == {
        entry.code for entry in REVOCATION_CODES
    }


async def test_a_member_change_names_the_member_and_drops_cached_memberships() -> None:
    heard: list[dict[str, Any]] = []

    async def hear(message: dict[str, Any]) -> None:
        heard.append(message)

    bus = LocalBus()
    await bus.start(hear)
    await AccessChanges(bus, "instance-1", FakeClock()).member_removed(TEAM, ACCOUNT)
    assert [m["kind"] for m in heard] == ["memberships", "revoke"]
    assert heard[0]["account_ids"] == [ACCOUNT]
    revoke = LinkRevoke.model_validate(heard[1]["revoke"])
    assert (revoke.team_id, revoke.account_id, revoke.code) == (
        TEAM,
        ACCOUNT,
        "removedFromTeam",
    )
