"""The peer manager: every RTCPeerConnection of this host, from ticket to close.

A peer is let in only with a ticket the hub signed for this host, whose DTLS
fingerprint is the one in the offer; once DTLS is up, the certificate the peer
really presented is checked against the ticket again. Handlers are set before
the remote description; a failed or closed connection is closed and forgotten.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription
from aiortc.rtcdtlstransport import certificate_digest

from server.common.clock import Clock
from server.common.errors import InvalidArgument
from server.common.keys import SigningKey
from server.common.protocol.events import HostEvent, Revoked
from server.common.protocol.link import LinkRevoke
from server.common.protocol.signaling import answer_proof
from server.common.protocol.team_api import TEAM_API_LABEL
from server.common.roles import Role
from server.common.sctp_bundling import bundle_sctp
from server.common.sdp import sdp_fingerprint
from server.common.tasks import BackgroundTasks
from server.common.tickets import TicketRefused, TicketVerifier
from server.common.tokens import new_id
from server.common.turn import ice_servers_for
from server.config import RtcSettings
from server.host.metrics import HostMetrics
from server.host.rtc.revocations import Revocations, revocation_names
from server.host.rtc.sctp_limits import cap_inbound_messages
from server.host.rtc.team_api import PeerIdentity, TeamApi, TeamApiLimits, TeamApiSession

# Serves a newly opened data channel of a peer (a live view, the egress relay, ...).
ChannelOpener = Callable[[PeerIdentity, Any], None]

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Peer:
    identity: PeerIdentity
    fingerprint: str
    connection: RTCPeerConnection
    # The hub's id of the request that brought the offer: in every log line of this peer.
    request_id: str
    team_api: TeamApiSession | None = None
    channels: int = 0
    # Closes the peer unless it connects in time; ended when it connects or closes, so a
    # short-lived peer is not held for the whole deadline.
    deadline: asyncio.Task[None] | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    def channel_closed(self) -> None:
        self.channels -= 1

    def end_deadline(self) -> None:
        if self.deadline is not None and self.deadline is not asyncio.current_task():
            self.deadline.cancel()
        self.deadline = None


def peer_certificate_fingerprint(connection: RTCPeerConnection) -> str | None:
    """The sha-256 fingerprint of the certificate the remote side used in DTLS."""
    # aiortc keeps the DTLS session private; its transport is the one place to ask.
    dtls = connection.sctp.transport if connection.sctp is not None else None
    ssl = getattr(dtls, "_ssl", None)
    if ssl is None:
        return None
    certificate = ssl.get_peer_certificate(as_cryptography=True)
    return None if certificate is None else str(certificate_digest(certificate, "sha-256"))


class PeerManager:
    """Owns every peer connection of the host."""

    def __init__(
        self,
        identity_key: SigningKey,
        settings: RtcSettings,
        clock: Clock,
        api: TeamApi,
        make_call: Callable[[PeerIdentity], object],
        metrics: HostMetrics,
    ) -> None:
        self._key = identity_key
        self._settings = settings
        self._clock = clock
        self._api = api
        # One store for every session, so all peers of one member share their limits.
        self._team_api_limits = TeamApiLimits(settings, clock)
        self._make_call = make_call
        self._verifier: TicketVerifier | None = None
        self.revocations = Revocations(clock)
        self._peers: dict[str, Peer] = {}
        self._channels: dict[str, ChannelOpener] = {}
        self._tasks = BackgroundTasks("peer manager")
        self._metrics = metrics
        metrics.peer_count = lambda: len(self._peers)
        metrics.table_sources.append(self.table_sizes)

    def table_sizes(self) -> dict[str, int]:
        """How much live state the manager holds: none of it may grow with peers that left."""
        return {
            "peers": len(self._peers),
            "peer_channels": sum(p.channels for p in self._peers.values()),
            "team_api_sessions": sum(p.team_api is not None for p in self._peers.values()),
            "team_api_in_flight": sum(
                p.team_api.in_flight for p in self._peers.values() if p.team_api is not None
            ),
            "team_api_members_in_flight": len(self._team_api_limits),
            "peer_tasks": len(self._tasks),
            "revocations": len(self.revocations),
            # Single-use ticket nonces, each forgotten when its ticket would have expired.
            "ticket_nonces": len(self._verifier) if self._verifier is not None else 0,
        }

    def register_channel(self, prefix: str, opener: ChannelOpener) -> None:
        """Channels whose label starts with ``prefix`` go to ``opener(peer, channel)``; the
        ``team-api`` channel is the manager's own. One registration per kind of channel."""
        if prefix in self._channels or TEAM_API_LABEL.startswith(prefix):
            raise ValueError(f"a channel handler for {prefix!r} is registered already")
        self._channels[prefix] = opener

    def trust_hub(self, host_id: str, hub_key: str, hub_time: float) -> None:
        """Tickets are checked against this host id and this hub key from now on, and
        refused if issued before ``hub_time`` (the hub's clock when this link began)."""
        self.revocations.link_began(hub_time)
        if self._verifier is None or (self._verifier.host_id, self._verifier.hub_key) != (
            host_id,
            hub_key,
        ):
            self._verifier = TicketVerifier(host_id, hub_key, self._clock)

    def peers(self) -> list[PeerIdentity]:
        return [p.identity for p in self._peers.values()]

    def team_peers(self, team_id: str) -> list[PeerIdentity]:
        return [p.identity for p in self._peers.values() if p.identity.team_id == team_id]

    def announce(
        self, team_id: str, event: HostEvent, only: Callable[[str], bool] | None = None
    ) -> None:
        """Send an event to every connected peer of the team (whose account passes ``only``)."""
        for peer in self._peers.values():
            identity = peer.identity
            if identity.team_id != team_id or peer.team_api is None:
                continue
            if only is None or only(identity.account_id):
                peer.team_api.event(event)

    def _ice_servers(self) -> list[RTCIceServer]:
        who = f"host-{self._verifier.host_id}" if self._verifier else "host"
        return [
            RTCIceServer(urls=s.urls, username=s.username, credential=s.credential)
            for s in ice_servers_for(self._settings, who, self._clock.now())
        ]

    async def accept(self, ticket: str, offer_sdp: str, request_id: str) -> tuple[str, str]:
        """Check the ticket and offer, and answer; returns (answer SDP, signature).
        ``request_id`` is the hub's id of the request that relayed the offer."""
        if self._verifier is None:
            raise TicketRefused("the host is not linked to a hub yet", code="ticketInvalid")
        claims = self._verifier.verify(ticket)
        self.revocations.check(claims, claims.issued_at)
        if sdp_fingerprint(offer_sdp) != claims.fingerprint.upper():
            raise TicketRefused(
                "the offer's certificate is not the one the ticket names",
                code="fingerprintMismatch",
            )
        connection = RTCPeerConnection(RTCConfiguration(iceServers=self._ice_servers()))
        identity = PeerIdentity(
            peer_id=new_id(),
            account_id=claims.account_id,
            team_id=claims.team_id,
            role=Role(claims.role),
            session_hash=claims.session_hash,
        )
        peer = Peer(identity, claims.fingerprint.upper(), connection, request_id)
        self._peers[identity.peer_id] = peer
        self._wire(peer)
        try:
            await connection.setRemoteDescription(
                RTCSessionDescription(sdp=offer_sdp, type="offer")
            )
            await connection.setLocalDescription(await connection.createAnswer())
        except Exception as exc:  # aiortc raises many kinds for a bad SDP
            if peer.closed.is_set():  # a revocation closed it meanwhile
                self.revocations.check(claims, claims.issued_at)
            await self._close(peer, "bad offer")
            raise InvalidArgument("the offer could not be used", code="badOffer") from exc
        try:
            # A revocation heard while the offer was applied closed the peer already,
            # or names it now: either way it does not get in.
            self.revocations.check(claims, claims.issued_at)
        except TicketRefused:
            await self._close(peer, "revoked while connecting")
            raise
        answer = connection.localDescription.sdp
        signature = self._key.sign(answer_proof(sdp_fingerprint(answer), claims.nonce))
        peer.deadline = self._tasks.spawn(self._connect_deadline(peer))
        log.info(
            "peer accepted",
            extra={
                "peer_id": identity.peer_id,
                "team_id": identity.team_id,
                "request_id": request_id,
            },
        )
        return answer, signature

    def _wire(self, peer: Peer) -> None:
        connection = peer.connection
        cap_inbound_messages(connection, self._settings.max_message_bytes, peer.identity.peer_id)
        if self._settings.sctp_bundling:
            bundle_sctp(connection)

        @connection.on("datachannel")
        def on_datachannel(channel: Any) -> None:
            self._metrics.count_channel(channel)
            peer.channels += 1
            channel.on("close", peer.channel_closed)
            for prefix, opener in self._channels.items():
                if channel.label.startswith(prefix):
                    opener(peer.identity, channel)
                    return
            if channel.label != TEAM_API_LABEL or peer.team_api is not None:
                channel.close()
                return
            session = TeamApiSession(
                self._api,
                peer.identity,
                channel,
                self._make_call(peer.identity),
                self._team_api_limits,
                self._metrics,
            )
            peer.team_api = session
            channel.on("message", session.on_message)

        @connection.on("connectionstatechange")
        async def on_state() -> None:
            state = connection.connectionState
            if state == "connected":
                peer.end_deadline()
                if peer_certificate_fingerprint(connection) != peer.fingerprint:
                    log.warning(
                        "peer DTLS certificate differs from its ticket",
                        extra={"peer_id": peer.identity.peer_id, "request_id": peer.request_id},
                    )
                    await self._close(peer, "fingerprint mismatch")
            elif state in ("failed", "closed"):
                await self._close(peer, state)

    async def _connect_deadline(self, peer: Peer) -> None:
        await asyncio.sleep(self._settings.connect_seconds)
        if peer.connection.connectionState != "connected":
            await self._close(peer, "did not connect in time")

    async def revoke(self, revoke: LinkRevoke) -> int:
        """Close the peers a revocation names and refuse its tickets from now on; answers how
        many peers closed."""
        self.revocations.record(revoke)
        matched = [p for p in self._peers.values() if revocation_names(revoke, p.identity)]
        for peer in matched:
            if peer.team_api is not None:
                # Tell the peer why before the connection goes, so a client can say so.
                peer.team_api.event(Revoked(code=revoke.code, reason=revoke.reason))
                await peer.team_api.drain()
            await self._close(peer, revoke.reason)
        return len(matched)

    async def _close(self, peer: Peer, reason: str) -> None:
        if self._peers.pop(peer.identity.peer_id, None) is None:
            return
        peer.end_deadline()
        if peer.team_api is not None:
            peer.team_api.close()
        await peer.connection.close()
        peer.closed.set()
        log.info(
            "peer closed",
            extra={
                "peer_id": peer.identity.peer_id,
                "request_id": peer.request_id,
                "reason": reason,
            },
        )

    async def close_all(self) -> None:
        for peer in list(self._peers.values()):
            await self._close(peer, "host shutting down")
        await self._tasks.close()
