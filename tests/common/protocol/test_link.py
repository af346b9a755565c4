"""The hub-to-host link's messages as the host reads them."""

from __future__ import annotations

import json

from server.common.protocol.link import LinkRevoke, decode_link


def test_a_revocation_from_a_hub_that_names_no_cause_still_revokes() -> None:
    """A hub of an earlier release sends no ``code``: the host must still end the peers."""
    raw = {"type": "revoke", "accountId": "a" * 32, "reason": "removed", "revokedAt": 5.0}
    message = decode_link(json.dumps(raw))
    assert isinstance(message, LinkRevoke)
    assert (message.account_id, message.code, message.revoked_at) == (
        "a" * 32,
        "accessChanged",
        5.0,
    )


def test_a_revocation_keeps_the_cause_it_names() -> None:
    raw = {
        "type": "revoke",
        "teamId": "7" * 32,
        "code": "roleChanged",
        "reason": "r",
        "revokedAt": 1,
    }
    message = decode_link(json.dumps(raw))
    assert isinstance(message, LinkRevoke)
    assert message.code == "roleChanged"
