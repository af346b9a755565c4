"""The host's side of its link to a hub: authenticate, take offers and revocations, reconnect.

The link only carries signaling and revocations: peers that are connected stay
connected while it is down, and it comes back with backoff after a hub restart.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

import aiohttp

from server.common.errors import CrewhostError
from server.common.protocol.codec import encode, error_info
from server.common.protocol.link import (
    LINK_PATH,
    MAX_PEERS_CHECKED,
    HeldPeer,
    LinkAnswer,
    LinkChallenge,
    LinkHello,
    LinkHookDelivery,
    LinkHookDeliveryAck,
    LinkHookRegister,
    LinkHookSync,
    LinkMcpCancel,
    LinkMcpEnd,
    LinkMcpRequest,
    LinkMembersCheck,
    LinkMembersChecked,
    LinkOffer,
    LinkPeersCheck,
    LinkRefused,
    LinkRevoke,
    LinkWelcome,
    NamedMember,
    decode_link,
    link_proof,
)
from server.common.tasks import BackgroundTasks
from server.host.container import HostServices
from server.host.rtc.revocations import MemberRemoved

log = logging.getLogger(__name__)

BACKOFF_FIRST = 0.25
BACKOFF_MAX = 15.0


class LinkRefusedByHub(Exception):
    """The hub did not accept this host (unknown id or key); retrying will not help soon."""


# How long work that runs as a member waits, as a link begins, for the hub to say who left
# while it was down (a hub of an earlier release never says).
REMOVALS_WAIT_SECONDS = 30.0


class HostLinkClient:
    """Keeps one websocket to the hub and serves it."""

    def __init__(self, services: HostServices, hub_url: str, *, hub_key: str | None = None) -> None:
        self._services = services
        self._url = hub_url.rstrip("/").replace("http", "ws", 1) + LINK_PATH
        self._pinned_hub_key = hub_key
        self.linked = asyncio.Event()
        self.unlinked = asyncio.Event()
        self.hub_key: str | None = hub_key
        self._tasks = BackgroundTasks("hub link")
        # ``members-check`` messages of this link the hub has not answered yet.
        self._members_unanswered = 0
        self._hub_clock_ahead = 0.0

    async def run(self) -> None:
        """Link, serve, and relink with backoff, until cancelled."""
        delay = BACKOFF_FIRST
        try:
            await self._keep_linked(delay)
        finally:
            await self._tasks.close()

    async def _keep_linked(self, delay: float) -> None:
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    async with session.ws_connect(self._url, heartbeat=20.0) as socket:
                        await self._serve(socket)
                        delay = BACKOFF_FIRST
                except (aiohttp.ClientError, ConnectionError, TimeoutError) as exc:
                    log.info("hub link down", extra={"error": type(exc).__name__})
                except LinkRefusedByHub as exc:
                    log.error("the hub refused this host's link", extra={"reason": str(exc)})
                    delay = BACKOFF_MAX
                finally:
                    self.linked.clear()
                    self.unlinked.set()
                await asyncio.sleep(delay * (0.5 + random.random()))  # noqa: S311 - jitter
                delay = min(delay * 2, BACKOFF_MAX)

    async def _serve(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        challenge = decode_link(await socket.receive_str(timeout=10))
        if not isinstance(challenge, LinkChallenge):
            raise LinkRefusedByHub("the hub did not start with a challenge")
        if self._pinned_hub_key is not None and challenge.hub_key != self._pinned_hub_key:
            raise LinkRefusedByHub("the hub's ticket key changed")
        host_id = self._services.host_id
        signature = self._services.identity.sign(link_proof(challenge.nonce, host_id))
        await socket.send_str(encode(LinkHello(host_id=host_id, signature=signature)))
        try:
            welcome = decode_link(await socket.receive_str(timeout=10))
        except TypeError as exc:  # the hub closed instead of answering
            raise LinkRefusedByHub("the hub does not know this host") from exc
        if not isinstance(welcome, LinkWelcome):
            raise LinkRefusedByHub("no welcome")
        self.hub_key = challenge.hub_key
        self._services.peers.trust_hub(host_id, challenge.hub_key, welcome.hub_time)
        # How far the hub's clock is ahead of this host's (less the welcome's way here).
        self._hub_clock_ahead = welcome.hub_time - self._services.clock.now()
        # Work that runs as a member waits for the hub's word on who left meanwhile.
        self._services.removals.expect(REMOVALS_WAIT_SECONDS)
        await self._check_peers(socket)
        await self._register_hooks(socket)
        drain = self._tasks.spawn(self._drain_outbox(socket))
        self.unlinked.clear()
        self.linked.set()
        log.info("linked to hub", extra={"host_id": host_id})
        try:
            await self._take_messages(socket)
        finally:
            drain.cancel()

    async def _check_peers(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        """The hub hears of every peer this host holds, and of every member its data names:
        a revocation or a removal made while the link was down comes back for those."""
        held = [
            HeldPeer(
                session_hash=p.session_hash,
                team_id=p.team_id,
                account_id=p.account_id,
                role=p.role,
            )
            for p in self._services.peers.peers()
        ]
        for start in range(0, len(held), MAX_PEERS_CHECKED):
            check = LinkPeersCheck(peers=held[start : start + MAX_PEERS_CHECKED])
            await socket.send_str(encode(check))
        # And of every member its data names: a removal made meanwhile comes back too.
        named: dict[tuple[str, str], float] = {}
        for source in (
            self._services.routines,
            self._services.notifications,
            self._services.threads,
        ):
            for key, since in (await source.named_members()).items():
                named[key] = min(since, named.get(key, since))
        members = [
            NamedMember(
                team_id=team,
                account_id=account,
                named_since=named[team, account] + self._hub_clock_ahead,
            )
            for team, account in sorted(named)
        ]
        slices = range(0, len(members), MAX_PEERS_CHECKED)
        self._members_unanswered = len(slices)
        if not slices:
            self._services.removals.heard()
        for start in slices:
            members_check = LinkMembersCheck(members=members[start : start + MAX_PEERS_CHECKED])
            await socket.send_str(encode(members_check))

    async def _register_hooks(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        """The hub learns every webhook trigger of this host, and forgets any other."""
        outbox = self._services.hub_outbox
        outbox.clear()  # what it held is in the full list below
        registrations = await self._services.routine_hooks.registrations()
        await socket.send_str(encode(LinkHookSync(hook_ids=[r.hook_id for r in registrations])))
        for registration in registrations:
            await socket.send_str(encode(LinkHookRegister(hook=registration)))

    async def _drain_outbox(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        outbox = self._services.hub_outbox
        while not socket.closed:
            message = await outbox.get()
            await socket.send_str(encode(message))

    async def _take_messages(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        async for raw in socket:
            if raw.type != aiohttp.WSMsgType.TEXT:
                continue
            try:
                message = decode_link(raw.data)
            except CrewhostError:
                log.warning("dropped a malformed message from the hub")
                continue
            if isinstance(message, LinkOffer):
                self._tasks.start(self._answer(socket, message))
            elif isinstance(message, LinkRevoke):
                self._tasks.start(self._services.peers.revoke(message))
                if (removed := MemberRemoved.of(message)) is not None:
                    # Heard in full before the next message: a ``members-checked`` after it
                    # lets waiting work start only once what is kept of them has gone.
                    await self._services.signals.deliver(removed)
            elif isinstance(message, LinkMembersChecked):
                self._members_unanswered -= 1
                if self._members_unanswered <= 0:
                    self._services.removals.heard()
            elif isinstance(message, LinkHookDelivery):
                self._tasks.start(self._take_delivery(socket, message))
            elif isinstance(message, LinkMcpRequest):
                self._tasks.start(self._serve_mcp(socket, message))
            elif isinstance(message, LinkMcpCancel):
                self._services.mcp_endpoint.cancel(message.request_id)
            elif isinstance(message, LinkMcpEnd):
                self._tasks.start(self._services.mcp_endpoint.end_tokens(message.token_ids))

    async def _serve_mcp(
        self, socket: aiohttp.ClientWebSocketResponse, request: LinkMcpRequest
    ) -> None:
        """An outside agent's MCP request, answered piece by piece down this link."""

        async def send(message: Any) -> None:
            if not socket.closed:
                await socket.send_str(encode(message))

        await self._services.mcp_endpoint.serve(request, send, self._services.host_id)

    async def _take_delivery(
        self, socket: aiohttp.ClientWebSocketResponse, delivery: LinkHookDelivery
    ) -> None:
        """Start the delivery's run (once), then tell the hub it may stop sending it; a
        failure leaves it with the hub, which sends it again."""
        try:
            await self._services.routine_hooks.take_delivery(delivery)
        except CrewhostError as exc:
            log.warning(
                "a webhook delivery was not taken",
                extra={"code": exc.code, "delivery_id": delivery.delivery_id},
            )
            return
        if not socket.closed:
            await socket.send_str(encode(LinkHookDeliveryAck(delivery_id=delivery.delivery_id)))

    async def _answer(self, socket: aiohttp.ClientWebSocketResponse, offer: LinkOffer) -> None:
        reply: LinkAnswer | LinkRefused
        try:
            sdp, signature = await self._services.peers.accept(
                offer.ticket, offer.sdp, offer.request_id
            )
            reply = LinkAnswer(request_id=offer.request_id, sdp=sdp, signature=signature)
        except CrewhostError as exc:
            log.info("peer refused", extra={"code": exc.code, "request_id": offer.request_id})
            reply = LinkRefused(request_id=offer.request_id, error=error_info(exc))
        if not socket.closed:
            await socket.send_str(encode(reply))
