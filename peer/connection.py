"""A WebRTC connection to a host, authenticated by a hub ticket, with the team-api channel."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from peer.hub_client import HubClient, HubError
from peer.known_hosts import KnownHosts
from server.common.error_codes import REVOCATION_CODES
from server.common.keys import b64decode, verify_signature
from server.common.protocol.codec import encode
from server.common.protocol.events import Revoked
from server.common.protocol.signaling import ConnectAnswer, TicketGrant, answer_proof
from server.common.protocol.team_api import (
    TEAM_API_LABEL,
    TeamApiError,
    TeamApiEvent,
    TeamApiRequest,
    TeamApiResult,
)
from server.common.sdp import sdp_fingerprint

if TYPE_CHECKING:
    from aiortc import RTCIceServer, RTCPeerConnection


class HostSignatureInvalid(Exception):
    """The answer was not signed by the host key: the hub (or someone) altered it."""

    code = "hostSignatureInvalid"


class NotServed(Exception):
    """The host does not list a capability this call needs (an older or a trimmed host)."""

    code = "notServed"

    def __init__(self, capability: str) -> None:
        super().__init__(f"this host does not serve {capability}")
        self.capability = capability


class AccessRevoked(Exception):
    """The host ended the connection because the member's access changed (removed from the
    team, signed out, a new role, the host removed): its ``revoked`` event, kept."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{reason} ({code})")
        self.code = code
        self.reason = reason
        self.message = _REVOCATION_MEANINGS.get(code, reason)


_REVOCATION_MEANINGS = {entry.code: entry.meaning for entry in REVOCATION_CODES}


class TeamApiCallError(Exception):
    """The host answered a Team API request with an error."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message


class HostConnection:
    """An open connection to one host; ``call`` a route, read ``events``."""

    def __init__(self, connection: RTCPeerConnection, channel: Any, host_id: str) -> None:
        self.connection = connection
        self.host_id = host_id
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.closed = asyncio.Event()
        # Why the host ended the connection, once it said so (just before closing it).
        self.revoked: AccessRevoked | None = None
        self._channel = channel
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._capabilities: frozenset[str] | None = None
        channel.on("message", self._on_message)
        channel.on("close", self._on_closed)

        @connection.on("connectionstatechange")
        def on_state() -> None:
            if connection.connectionState in ("failed", "closed"):
                self._on_closed()

    def _on_message(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        try:
            if "event" in message:
                event = TeamApiEvent.model_validate(message).model_dump()
                if event["event"] == Revoked.NAME and isinstance(event.get("data"), dict):
                    data = event["data"]
                    self.revoked = AccessRevoked(str(data.get("code")), str(data.get("reason")))
                self.events.put_nowait(event)
                return
            answer = (TeamApiError if "error" in message else TeamApiResult).model_validate(message)
        except ValidationError:
            return  # not a message of this protocol: nothing waits for it
        request_id = answer.id
        future = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if future is None or future.done():
            return
        if isinstance(answer, TeamApiError):
            future.set_exception(TeamApiCallError(answer.error.code, answer.error.message))
        else:
            future.set_result(answer.result)

    def _on_closed(self) -> None:
        self.closed.set()
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection to the host closed"))
        self._waiting.clear()

    async def call(
        self, route: str, args: dict[str, Any] | None = None, *, wait_seconds: float = 15
    ) -> Any:
        """Call a Team API route and answer its result (or raise ``TeamApiCallError``)."""
        if self.closed.is_set():
            raise ConnectionError("the connection to the host is closed")
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self.send_raw(encode(TeamApiRequest(id=request_id, route=route, args=args or {})))
        try:
            return await asyncio.wait_for(future, wait_seconds)
        finally:
            self._waiting.pop(request_id, None)

    async def capabilities(self) -> frozenset[str]:
        """The capability names the host serves (asked once per connection)."""
        if self._capabilities is None:
            answer = await self.call("capabilities")
            self._capabilities = frozenset(answer["capabilities"])
        return self._capabilities

    async def require(self, *capabilities: str) -> None:
        """Raises ``NotServed`` for the first of ``capabilities`` the host does not list."""
        served = await self.capabilities()
        for capability in capabilities:
            if capability not in served:
                raise NotServed(capability)

    def send_raw(self, data: str | bytes) -> None:
        """Send a message as-is (tests use it to send what a well-behaved client would not)."""
        self._channel.send(data)

    def ended(self) -> Exception:
        """Why the connection is over: the host's revocation, or the connection closing."""
        return self.revoked or ConnectionError("the host closed the connection")

    async def close(self) -> None:
        await self.connection.close()
        self._on_closed()


def ticket_nonce(ticket: str) -> str:
    payload = json.loads(b64decode(ticket.partition(".")[0]))
    return str(payload["nonce"])


async def relay_with_ticket(
    hub: HubClient, team_id: str, host_id: str, offer: str
) -> tuple[TicketGrant, ConnectAnswer]:
    """A ticket for the offer, then the offer relayed with it.

    A host refuses a ticket issued before its current link to the hub began (it restarted
    between the two), and the hub one issued before a role change: either way the refusal
    asks for one fresh ticket, and the hub checks the caller's access again to issue it.
    """
    for attempt in range(2):
        grant = await hub.ticket(team_id, host_id, sdp_fingerprint(offer))
        try:
            return grant, await hub.connect(team_id, host_id, grant.ticket, offer)
        except HubError as exc:
            if attempt or exc.code != "ticketRevoked":
                raise
    raise AssertionError("unreachable")


async def connect_to_host(
    hub: HubClient,
    team_id: str,
    host_id: str,
    known_hosts: KnownHosts,
    account_id: str,
    *,
    ice_servers: list[RTCIceServer] | None = None,
    wait_seconds: float = 20,
    sctp_bundling: bool = True,
) -> HostConnection:
    """Ticket, offer, pinned and verified answer, open channel: a ready ``HostConnection``.

    Without ``ice_servers`` the hub's configured STUN/TURN servers are used. With
    ``sctp_bundling`` (``server.common.sctp_bundling``) SACKs are delayed and chunks share
    packets; off, the connection is aiortc's as it comes.
    """
    # WebRTC is loaded by the commands that connect only: the others start sooner.
    from aiortc import RTCConfiguration, RTCIceServer, RTCPeerConnection, RTCSessionDescription

    from server.common.sctp_bundling import bundle_sctp

    if ice_servers is None:
        config = await hub.rtc_config()
        ice_servers = [
            RTCIceServer(urls=s.urls, username=s.username, credential=s.credential)
            for s in config.ice_servers
        ]
    connection = RTCPeerConnection(RTCConfiguration(iceServers=ice_servers))
    if sctp_bundling:
        bundle_sctp(connection)
    try:
        channel = connection.createDataChannel(TEAM_API_LABEL, ordered=True)
        opened = asyncio.Event()
        channel.on("open", opened.set)
        # aiortc gathers every ICE candidate here, so the offer needs no trickling.
        await connection.setLocalDescription(await connection.createOffer())
        offer = connection.localDescription.sdp
        grant, answer = await relay_with_ticket(hub, team_id, host_id, offer)
        known_hosts.check(account_id, host_id, answer.host_key)
        proof = answer_proof(sdp_fingerprint(answer.sdp), ticket_nonce(grant.ticket))
        if not verify_signature(answer.host_key, proof, answer.signature):
            raise HostSignatureInvalid("the host's answer does not carry the host's signature")
        await connection.setRemoteDescription(RTCSessionDescription(sdp=answer.sdp, type="answer"))
        host = HostConnection(connection, channel, host_id)
        await asyncio.wait_for(opened.wait(), wait_seconds)
    except BaseException:
        with contextlib.suppress(Exception):
            await connection.close()
        raise
    return host
