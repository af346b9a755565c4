"""The host's end of members' ``egress`` channels.

A member (owner or admin) who shares their computer opens an ``egress`` data channel on
their peer connection; the peer manager hands it here. The newest open channel of a
member carries that member's streams. When it closes, its streams end, and the
computer is offline until another channel opens: a browser connection then gets 502,
never a direct connection. No target and no byte count is logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from server.common.egress import (
    EgressStream,
    Refusal,
    StreamRefused,
    StreamReset,
    channel_multiplexer,
)
from server.common.roles import Role
from server.host.proxies.exits import Exit, ExitRefused, TargetCause, Upstream
from server.host.rtc.team_api import PeerIdentity
from server.host.signals import Signals

log = logging.getLogger(__name__)

EGRESS_LABEL = "egress"
_CAUSES: dict[Refusal, TargetCause] = {
    Refusal.POLICY: "policy",
    Refusal.UNRESOLVED: "unresolved",
    Refusal.UNREACHABLE: "unreachable",
    Refusal.BUSY: "busy",
}


class _Channel:
    def __init__(self, identity: PeerIdentity, channel: Any) -> None:
        self.identity = identity
        self.channel = channel
        self.mux = channel_multiplexer(channel)

    def closed(self) -> None:
        self.mux.close()


class StreamUpstream:
    """An egress stream as the relay's ``Upstream``."""

    def __init__(self, stream: EgressStream) -> None:
        self._stream = stream

    async def read(self, limit: int) -> bytes:
        try:
            return await self._stream.read(limit)
        except StreamReset:
            return b""

    async def write(self, data: bytes) -> None:
        try:
            await self._stream.write(data)
        except StreamReset as exc:
            raise ConnectionResetError("the egress stream ended") from exc

    async def close(self) -> None:
        await self._stream.close()
        self._stream.abort()


class ComputerExit:
    """Sends each browser connection as one stream over the member's newest channel."""

    def __init__(self, channels: EgressChannels, team_id: str, member_id: str) -> None:
        self._channels = channels
        self._key = (team_id, member_id)

    async def open(self, host: str, port: int) -> Upstream:
        carrier = self._channels.newest(*self._key)
        if carrier is None:
            raise ExitRefused("offline")
        try:
            stream = await carrier.mux.open(host, port)
        except StreamRefused as refused:
            if refused.reason is None:
                raise ExitRefused("offline") from None
            raise ExitRefused("target", _CAUSES[refused.reason]) from None
        return StreamUpstream(stream)


@dataclass(frozen=True, slots=True)
class EgressOnline:
    """The member's computer came online (its first egress channel opened) or went
    offline (its last one closed)."""

    team_id: str
    member_id: str
    online: bool


class EgressChannels:
    """Every member's open egress channels; publishes ``EgressOnline`` when a member's
    computer comes online or goes offline."""

    def __init__(self, signals: Signals) -> None:
        self._open: dict[tuple[str, str], list[_Channel]] = {}
        self._signals = signals

    def open(self, identity: PeerIdentity, channel: Any) -> None:
        """The peer manager's handler for the ``egress`` label."""
        if not identity.role.at_least(Role.ADMIN):
            channel.close()  # sharing is an owner's or admin's; a member's channel goes
            return
        key = (identity.team_id, identity.account_id)
        carrier = _Channel(identity, channel)
        was_online = bool(self._open.get(key))
        self._open.setdefault(key, []).append(carrier)

        def on_close() -> None:
            self._gone(key, carrier)

        channel.on("close", on_close)

        log.info("member egress opened", extra={"team_id": identity.team_id})
        if not was_online:
            self._signals.publish(EgressOnline(identity.team_id, identity.account_id, True))

    def online(self, team_id: str, member_id: str) -> bool:
        return self.newest(team_id, member_id) is not None

    def newest(self, team_id: str, member_id: str) -> _Channel | None:
        carriers = [
            c
            for c in self._open.get((team_id, member_id), [])
            if not c.mux.closed and c.channel.readyState == "open"
        ]
        return carriers[-1] if carriers else None

    def exit_for(self, team_id: str, member_id: str) -> Exit:
        return ComputerExit(self, team_id, member_id)

    def close_all(self) -> None:
        for key, carriers in list(self._open.items()):
            for carrier in list(carriers):
                carrier.channel.close()
                self._gone(key, carrier)

    def _gone(self, key: tuple[str, str], carrier: _Channel) -> None:
        carrier.closed()
        carriers = self._open.get(key, [])
        if carrier in carriers:
            carriers.remove(carrier)
            log.info("member egress closed", extra={"team_id": key[0]})
            if not carriers:
                del self._open[key]
                self._signals.publish(EgressOnline(key[0], key[1], False))
