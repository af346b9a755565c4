"""Ending live peer connections when access ends: the hub tells every host at once.

A revocation goes on the bus, so every hub instance hears it and forwards it
down each host link it holds; the host closes the matching peers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from server.common.protocol import LinkRevoke
from server.hub.bus import Bus

RevokeSink = Callable[[LinkRevoke, str | None], Awaitable[None]]


class Revocations:
    """Publishes revocations; ``deliver`` is called on every instance for each one."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def sessions_ended(self, token_hashes: Iterable[str], reason: str) -> None:
        hashes = list(token_hashes)
        # NOTIFY payloads are small: send long lists in slices.
        for start in range(0, len(hashes), 50):
            revoke = LinkRevoke(session_hashes=hashes[start : start + 50], reason=reason)
            await self._publish(revoke, None)

    async def member_changed(self, team_id: str, account_id: str, reason: str) -> None:
        await self._publish(LinkRevoke(team_id=team_id, account_id=account_id, reason=reason), None)

    async def host_removed(self, host_id: str) -> None:
        await self._publish(LinkRevoke(all_peers=True, reason="the host was removed"), host_id)

    async def _publish(self, revoke: LinkRevoke, host_id: str | None) -> None:
        await self._bus.publish(
            {"kind": "revoke", "host_id": host_id, "revoke": revoke.model_dump(mode="json")}
        )
