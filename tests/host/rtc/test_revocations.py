"""The host's memory of revocations: which tickets it refuses, and for how long."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from server.common.protocol.link import LinkRevoke
from server.common.tickets import TicketRefused
from server.host.rtc.revocations import KEEP_SECONDS, Revocations
from tests.support.clock import FakeClock

# Ids as the hub mints them (32 hex), which a link message's ids must be.
TEAM_1, TEAM_2 = "1" * 32, "2" * 32
ACC_1, ACC_2 = "a" * 32, "b" * 32


@dataclass(frozen=True)
class Holder:
    account_id: str = ACC_1
    team_id: str = TEAM_1
    session_hash: str = "session-1"


def revoke(revoked_at: float, **names: object) -> LinkRevoke:
    return LinkRevoke.model_validate(
        {"code": "roleChanged", "reason": "test", "revoked_at": revoked_at, **names}
    )


def refusal(revocations: Revocations, holder: Holder, issued_at: float) -> str | None:
    """The code a ticket issued at ``issued_at`` is refused with, or None if let in."""
    try:
        revocations.check(holder, issued_at)
    except TicketRefused as refused:
        return refused.code
    return None


@pytest.fixture
def revocations() -> Revocations:
    kept = Revocations(FakeClock())
    kept.link_began(1000.0)
    return kept


def test_nothing_is_accepted_before_a_link_began() -> None:
    assert refusal(Revocations(FakeClock()), Holder(), 2000.0) == "ticketRevoked"


def test_a_ticket_issued_before_the_link_began_is_refused(revocations: Revocations) -> None:
    assert refusal(revocations, Holder(), 999.0) == "ticketRevoked"
    assert refusal(revocations, Holder(), 1000.0) is None


@pytest.mark.parametrize(
    "names",
    [
        {"team_id": TEAM_1, "account_id": ACC_1},
        {"session_hashes": ["other", "session-1"]},
        {"all_peers": True},
    ],
)
def test_a_ticket_issued_before_a_revocation_naming_it_is_refused(
    revocations: Revocations, names: dict[str, object]
) -> None:
    revocations.record(revoke(1010.0, **names))
    assert refusal(revocations, Holder(), 1005.0) == "ticketRevoked"
    assert refusal(revocations, Holder(), 1010.0) == "ticketRevoked"
    # Issued after the revocation: the hub checked the new state when it signed.
    assert refusal(revocations, Holder(), 1010.5) is None


def test_a_revocation_naming_someone_else_refuses_nothing(revocations: Revocations) -> None:
    revocations.record(revoke(1010.0, team_id=TEAM_1, account_id=ACC_2))
    revocations.record(revoke(1010.0, team_id=TEAM_2, account_id=ACC_1))
    revocations.record(revoke(1010.0, session_hashes=["session-2"]))
    assert refusal(revocations, Holder(), 1005.0) is None


def test_revocations_are_forgotten_once_no_ticket_could_outlive_them() -> None:
    clock = FakeClock()
    revocations = Revocations(clock)
    revocations.link_began(0.0)
    revocations.record(revoke(10.0, all_peers=True))
    clock.advance(KEEP_SECONDS - 1)
    assert refusal(revocations, Holder(), 5.0) == "ticketRevoked"
    clock.advance(2)
    assert refusal(revocations, Holder(), 5.0) is None
    assert len(revocations) == 0
