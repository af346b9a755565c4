"""Host links: the websocket each host keeps to a hub, and the signaling relayed over it.

A host proves itself by signing the hub's challenge with its identity key. An
offer for a host linked to another hub instance goes out on the bus; the
instance holding the link relays it and sends the answer back the same way.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from server.common.clock import Clock
from server.common.errors import CrewhostError, Forbidden, Unavailable
from server.common.keys import verify_signature
from server.common.protocol.codec import encode, error_info
from server.common.protocol.link import (
    MAX_LINK_MESSAGE,
    LinkAnswer,
    LinkChallenge,
    LinkHello,
    LinkHookDelivery,
    LinkHookDeliveryAck,
    LinkHookRegister,
    LinkHookRemove,
    LinkHookSync,
    LinkMcpResponse,
    LinkMcpResponseBody,
    LinkMcpResponseStart,
    LinkMcpToolUsed,
    LinkMembersCheck,
    LinkMembersChecked,
    LinkOffer,
    LinkPeersCheck,
    LinkRefused,
    LinkRevoke,
    LinkWelcome,
    decode_link,
    link_proof,
)
from server.common.request_ids import current_request_id
from server.common.tasks import BackgroundTasks
from server.common.tokens import new_id
from server.hub.bus import Bus, LocalBus
from server.hub.services.access_tokens import AccessTokenService, HostReportedUse
from server.hub.services.hooks import HookService
from server.hub.services.hosts import HostService
from server.hub.services.peer_checks import PeerChecks
from server.hub.services.tickets import TicketService
from server.hub.storage.hooks import HubDelivery
from server.hub.storage.hosts import Host

log = logging.getLogger(__name__)

HELLO_SECONDS = 10.0
OFFER_SECONDS = 15.0
# A webhook delivery not acknowledged this long after it was sent is sent again.
HOOK_RESEND_SECONDS = 30.0

# A piece of a relayed MCP answer, or None when its link ended.
McpReply = LinkMcpResponseStart | LinkMcpResponseBody | LinkMcpResponse


@dataclass(eq=False)
class HostLink:
    """One host's live link to this hub instance."""

    host: Host
    socket: web.WebSocketResponse
    pending: dict[str, asyncio.Future[LinkAnswer | LinkRefused]] = field(default_factory=dict)

    @property
    def host_id(self) -> str:
        return self.host.id

    async def send(self, message: Any) -> None:
        await self.socket.send_str(encode(message))


class HostLinks:
    """The links held by this instance, the link endpoint, and the offer relay."""

    def __init__(
        self,
        hosts: HostService,
        tickets: TicketService,
        bus: Bus,
        instance_id: str,
        clock: Clock,
        hooks: HookService,
        access_tokens: AccessTokenService,
        peer_checks: PeerChecks,
    ) -> None:
        self._hosts = hosts
        self._peer_checks = peer_checks
        self._access_tokens = access_tokens
        # The relayed MCP requests waiting for their answers: request id to (host, queue).
        self._mcp_replies: dict[str, tuple[str, asyncio.Queue[McpReply | None]]] = {}
        self._hooks = hooks
        self._clock = clock
        self._tickets = tickets
        self._bus = bus
        self.instance_id = instance_id
        self._links: dict[str, HostLink] = {}
        self._remote: dict[str, asyncio.Future[LinkAnswer | LinkRefused]] = {}
        self._tasks = BackgroundTasks("host links")

    async def start(self) -> None:
        """Keep this hub's links marked online for as long as the hub runs.

        A hub alone (its bus in-process) holds every link there is, so none of those its
        last run left marked linked is alive: a host listed online then would be refused
        ``hostOffline`` for up to a lease. Other instances' links stay as they are."""
        if isinstance(self._bus, LocalBus):
            await self._hosts.forget_links()
        self._tasks.start(self._renew_forever())
        self._tasks.start(self._resend_hook_deliveries_forever())

    async def _resend_hook_deliveries_forever(self) -> None:
        while True:
            await asyncio.sleep(HOOK_RESEND_SECONDS)
            for link in list(self._links.values()):
                try:
                    await self._send_pending_deliveries(link)
                except Exception:  # a database hiccup or a closing link: next round
                    log.exception("resending webhook deliveries failed")

    async def _send_pending_deliveries(self, link: HostLink) -> None:
        """Every delivery the host has not acknowledged (the oldest first, a page a round)."""
        for delivery in await self._hooks.pending_for(link.host_id):
            await self._send_delivery(link, delivery)

    async def _send_delivery(self, link: HostLink, delivery: HubDelivery) -> None:
        if link.socket.closed:
            return
        await link.send(
            LinkHookDelivery(
                delivery_id=delivery.id,
                hook_id=delivery.hook_id,
                team_id=delivery.team_id,
                routine_id=delivery.routine_id,
                body=base64.b64encode(delivery.body.encode("utf-8")).decode("ascii"),
                received_at=delivery.received_at,
            )
        )

    async def _send_deliveries_by_id(self, host_id: str, delivery_ids: list[str]) -> None:
        for delivery_id in delivery_ids:
            link = self._links.get(host_id)
            if link is None:
                return
            delivery = await self._hooks.get_pending(host_id, delivery_id)
            if delivery is not None:
                await self._send_delivery(link, delivery)

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self._hosts.link_lease / 3)
            try:
                await self.renew()
            except Exception:  # a database hiccup: the next round tries again
                log.exception("renewing host links failed")

    async def renew(self) -> None:
        await self._hosts.renew_links(list(self._links), self.instance_id)

    def is_linked_here(self, host_id: str) -> bool:
        return host_id in self._links

    def require_reachable(self, host: Host) -> None:
        """Refuse at once (``hostOffline``) a host that no hub holds a link to, as far as the
        hub's list tells: a ticket or an offer for it would only wait out the relay's time."""
        if host.id not in self._links and not self._hosts.is_online(host):
            raise Unavailable("the host is not connected to the hub", code="hostOffline")

    async def relay_offer_to(self, host: Host, ticket: str, sdp: str) -> LinkAnswer:
        """``relay_offer`` for a host row just read. A link here that the row says another
        instance holds now is a dead path whose end this hub has not heard yet (the host
        relinked elsewhere): the offer goes out on the bus, to the holder."""
        stale = (
            host.id in self._links
            and host.linked_by is not None
            and host.linked_by != self.instance_id
        )
        return await self.relay_offer(host.id, ticket, sdp, via_bus=stale)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """``GET /v1/hosts/link``: a host's websocket."""
        socket = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_LINK_MESSAGE)
        await socket.prepare(request)
        link = await self._authenticate(socket)
        if link is None:
            await socket.close()
            return socket
        previous = self._links.get(link.host_id)
        self._links[link.host_id] = link
        if previous is not None:
            await previous.socket.close(message=b"replaced by a newer link")
        await self._hosts.add_link(link.host_id, self.instance_id)
        # Welcome last: once the host hears it, the hub lists it online and relays to it.
        await socket.send_str(encode(LinkWelcome(host_id=link.host_id, hub_time=self._clock.now())))
        log.info("host linked", extra={"host_id": link.host_id})
        # What arrived for it while it was away; its hook-sync may still be on its way.
        self._tasks.start(self._send_pending_deliveries(link))
        try:
            await self._serve(link)
        finally:
            if self._links.get(link.host_id) is link:
                del self._links[link.host_id]
                await self._hosts.remove_link(link.host_id, self.instance_id)
            for future in link.pending.values():
                future.cancel()
            for host_id, replies in list(self._mcp_replies.values()):
                if host_id == link.host_id:
                    replies.put_nowait(None)
            log.info("host link ended", extra={"host_id": link.host_id})
        return socket

    async def _authenticate(self, socket: web.WebSocketResponse) -> HostLink | None:
        nonce = secrets.token_urlsafe(24)
        signer = await self._tickets.signer()
        await socket.send_str(encode(LinkChallenge(nonce=nonce, hub_key=signer.public_key)))
        try:
            raw = await socket.receive(timeout=HELLO_SECONDS)
            if raw.type != WSMsgType.TEXT:
                return None
            hello = decode_link(raw.data)
        except (TimeoutError, CrewhostError):
            return None
        if not isinstance(hello, LinkHello):
            return None
        host = await self._hosts.get_host_for_link(hello.host_id)
        if host is None or not verify_signature(
            host.public_key, link_proof(nonce, host.id), hello.signature
        ):
            log.warning("refused a host link", extra={"host_id": hello.host_id[:64]})
            return None
        return HostLink(host, socket)

    async def _serve(self, link: HostLink) -> None:
        async for raw in link.socket:
            if raw.type != WSMsgType.TEXT:
                continue
            try:
                message = decode_link(raw.data)
            except CrewhostError:
                log.warning("dropped a malformed link message", extra={"host_id": link.host_id})
                continue
            if isinstance(message, LinkAnswer | LinkRefused):
                future = link.pending.pop(message.request_id, None)
                if future is not None and not future.done():
                    future.set_result(message)
            elif isinstance(message, LinkMcpResponseStart | LinkMcpResponseBody | LinkMcpResponse):
                waiting = self._mcp_replies.get(message.request_id)
                if waiting is not None and waiting[0] == link.host_id:
                    waiting[1].put_nowait(message)
            elif isinstance(message, LinkPeersCheck | LinkMembersCheck):
                self._tasks.start(self._check_peers(link, message))
            elif isinstance(message, LinkMcpToolUsed):
                self._access_tokens.keep_use_from_host(
                    HostReportedUse(
                        link.host_id,
                        message.team_id,
                        message.token_id,
                        message.tool,
                        message.outcome,
                    )
                )
            elif isinstance(
                message, LinkHookSync | LinkHookRegister | LinkHookRemove | LinkHookDeliveryAck
            ):
                try:
                    await self._take_hook_message(link, message)
                except Exception:  # one message's failure does not end the link
                    log.exception("a webhook message failed", extra={"host_id": link.host_id})

    async def _check_peers(
        self, link: HostLink, message: LinkPeersCheck | LinkMembersCheck
    ) -> None:
        """Revoke, down this link, the host's peers whose access ended while it was down,
        or the members its data names who left their team meanwhile."""
        checks, serves = self._peer_checks, link.host.team_id
        try:
            if isinstance(message, LinkPeersCheck):
                revokes = await checks.revocations(message.peers, serves)
            else:
                revokes = await checks.removals(message.members, serves)
            for revoke in revokes:
                await link.send(revoke)
            if isinstance(message, LinkMembersCheck):
                await link.send(LinkMembersChecked())
        except ConnectionError:
            pass  # the link went again: the next one checks anew
        except Exception:  # one message's failure does not end the link
            log.exception("a peers check failed", extra={"host_id": link.host_id})

    async def _take_hook_message(
        self,
        link: HostLink,
        message: LinkHookSync | LinkHookRegister | LinkHookRemove | LinkHookDeliveryAck,
    ) -> None:
        # In the order sent: a sync, then the registrations that follow it.
        if isinstance(message, LinkHookSync):
            await self._hooks.sync(link.host_id, message.hook_ids)
        elif isinstance(message, LinkHookRegister):
            await self._hooks.register(link.host, message.hook)
        elif isinstance(message, LinkHookRemove):
            await self._hooks.remove(link.host_id, message.team_id, message.hook_id)
        else:
            await self._hooks.acknowledge(link.host_id, message.delivery_id)

    def expect_mcp_replies(
        self, request_id: str, host_id: str, replies: asyncio.Queue[McpReply | None]
    ) -> None:
        """Put the answer of a relayed MCP request, piece by piece, on ``replies``."""
        self._mcp_replies[request_id] = (host_id, replies)

    def forget_mcp_replies(self, request_id: str) -> None:
        self._mcp_replies.pop(request_id, None)

    async def send_to_host(self, host_id: str, message: Any) -> None:
        """Send a message down a link this instance holds (``hostOffline`` if it holds none)."""
        link = self._links.get(host_id)
        if link is None or link.socket.closed:
            raise Unavailable("the host is not connected", code="hostOffline")
        await link.send(message)

    async def relay_offer(
        self,
        host_id: str,
        ticket: str,
        sdp: str,
        request_id: str | None = None,
        *,
        via_bus: bool = False,
    ) -> LinkAnswer:
        """Send an offer to a host wherever it is linked; its answer, or a clear refusal.
        ``request_id`` names it in both ends' logs: the HTTP request's id, or a new one.
        ``via_bus`` skips a link held here (one another instance holds now)."""
        request_id = request_id or current_request_id() or new_id()
        log.info("relaying an offer", extra={"host_id": host_id, "request_id": request_id})
        future: asyncio.Future[LinkAnswer | LinkRefused] = (
            asyncio.get_running_loop().create_future()
        )
        link = None if via_bus else self._links.get(host_id)
        if link is not None:
            link.pending[request_id] = future
            await link.send(LinkOffer(request_id=request_id, ticket=ticket, sdp=sdp))
        else:
            self._remote[request_id] = future
            await self._bus.publish(
                {
                    "kind": "offer",
                    "host_id": host_id,
                    "from": self.instance_id,
                    "request_id": request_id,
                    "ticket": ticket,
                    "sdp": sdp,
                }
            )
        try:
            reply = await asyncio.wait_for(future, OFFER_SECONDS)
        except (TimeoutError, asyncio.CancelledError) as exc:
            if link is None:
                raise Unavailable("the host is not connected", code="hostOffline") from exc
            raise Unavailable("the host did not answer in time", code="hostTimeout") from exc
        finally:
            self._remote.pop(request_id, None)
            if link is not None:
                link.pending.pop(request_id, None)
        if isinstance(reply, LinkRefused):
            raise Forbidden(reply.error.message, code=reply.error.code)
        return reply

    async def on_bus(self, message: dict[str, Any]) -> None:
        """A message from any hub instance (this one included)."""
        kind = message.get("kind")
        if kind == "offer" and message.get("host_id") in self._links:
            self._tasks.start(self._relay_for_other_instance(message))
        elif kind == "hook-delivery" and message.get("host_id") in self._links:
            ids = message.get("delivery_ids")
            if isinstance(ids, list):
                self._tasks.start(
                    self._send_deliveries_by_id(str(message["host_id"]), [str(i) for i in ids])
                )
        elif kind == "answer" and message.get("to") == self.instance_id:
            future = self._remote.pop(str(message.get("request_id")), None)
            if future is not None and not future.done():
                try:
                    reply = decode_link(str(message["reply"]))
                except (CrewhostError, KeyError):
                    reply = None
                if isinstance(reply, LinkAnswer | LinkRefused):
                    future.set_result(reply)
                else:
                    future.cancel()

    async def _relay_for_other_instance(self, message: dict[str, Any]) -> None:
        request_id = str(message["request_id"])
        reply: LinkAnswer | LinkRefused
        try:
            reply = await self.relay_offer(
                str(message["host_id"]), str(message["ticket"]), str(message["sdp"]), request_id
            )
            reply = reply.model_copy(update={"request_id": request_id})
        except CrewhostError as exc:
            reply = LinkRefused(request_id=request_id, error=error_info(exc))
        await self._bus.publish(
            {
                "kind": "answer",
                "to": message.get("from"),
                "request_id": request_id,
                "reply": encode(reply),
            }
        )

    async def deliver_revoke(self, message: dict[str, Any]) -> None:
        """Send a revocation down the links this instance holds."""
        try:
            revoke = LinkRevoke.model_validate(message["revoke"])
        except (KeyError, ValueError):
            return
        host_id = message.get("host_id")
        targets = [self._links[host_id]] if host_id in self._links else []
        if host_id is None:
            targets = list(self._links.values())
        for link in targets:
            try:
                await link.send(revoke)
            except ConnectionError:
                continue
            if host_id is not None and revoke.all_peers:
                await link.socket.close(message=b"host removed")

    async def close(self) -> None:
        await self._tasks.close()
        for link in list(self._links.values()):
            await link.socket.close(message=b"hub shutting down")
