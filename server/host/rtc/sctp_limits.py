"""A bound on what one peer can make the host hold of its unfinished data-channel messages.

aiortc's SCTP transport keeps every fragment of an inbound message until the last one
arrives, however many there are (it advertises a receive window but does not enforce
it), so a peer could make the host reassemble gigabytes before any size check runs.
``InboundMessageCap`` counts what a connection's transport holds after each DATA chunk,
across all its streams; past the cap it drops the fragments and closes the connection,
which ends that peer alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from aiortc import RTCPeerConnection
from aiortc.rtcsctptransport import DataChunk, ForwardTsnChunk, RTCSctpTransport

log = logging.getLogger(__name__)

# Charged for each held fragment besides its data (aiortc's DataChunk object and its
# bookkeeping), so that tiny fragments cannot hold much more memory than the cap says.
FRAGMENT_OVERHEAD = 256


class InboundMessageCap:
    """Closes a peer connection whose SCTP transport holds more than ``max_bytes`` of
    unfinished inbound messages; ``peak_bytes`` is the most it held after any chunk."""

    def __init__(self, connection: RTCPeerConnection, max_bytes: int, peer_id: str) -> None:
        self.max_bytes = max_bytes
        self.peak_bytes = 0
        self.exceeded = False
        self._connection = connection
        self._peer_id = peer_id
        self._transport: RTCSctpTransport | None = None
        # Stream id -> bytes charged, for streams holding any (a stream reset with fragments
        # still held stays counted: only a peer that abandons messages so gets closer to the cap).
        self._held: dict[int, int] = {}
        self._total = 0
        self._closing: asyncio.Task[None] | None = None
        # A plain function runs inside the state change, so the cap is in place before
        # aiortc starts SCTP (on "connected"), whichever step created the transport.
        connection.on("connectionstatechange", self._attach)
        self._attach()

    def _attach(self) -> None:
        transport = self._connection.sctp
        if self._transport is not None or transport is None:
            return
        self._transport = transport
        receive_data = transport._receive_data_chunk
        receive_forward_tsn = transport._receive_forward_tsn_chunk

        async def receive_data_within_cap(chunk: DataChunk) -> None:
            if self.exceeded:
                return  # the connection is closing: nothing more is reassembled
            await receive_data(chunk)
            self._recount(transport, (chunk.stream_id,))

        async def receive_forward_tsn_within_cap(chunk: ForwardTsnChunk) -> None:
            await receive_forward_tsn(chunk)
            self._recount(transport, list(self._held))  # it only drops held fragments

        # aiortc has no hook or limit for inbound reassembly, so this one transport's
        # handlers are wrapped (the class, and every other connection, are untouched).
        transport._receive_data_chunk = receive_data_within_cap  # type: ignore[method-assign]
        transport._receive_forward_tsn_chunk = receive_forward_tsn_within_cap  # type: ignore[method-assign]

    def _recount(self, transport: RTCSctpTransport, stream_ids: Iterable[int]) -> None:
        for stream_id in stream_ids:
            stream = transport._inbound_streams.get(stream_id)
            fragments = [] if stream is None else stream.reassembly
            held = sum(len(f.user_data) for f in fragments) + FRAGMENT_OVERHEAD * len(fragments)
            self._total += held - self._held.pop(stream_id, 0)
            if held:
                self._held[stream_id] = held
        self.peak_bytes = max(self.peak_bytes, self._total)
        if self._total > self.max_bytes and not self.exceeded:
            self._exceed(transport)

    def _exceed(self, transport: RTCSctpTransport) -> None:
        self.exceeded = True
        log.warning(
            "peer sent more than the message cap; closing it",
            extra={
                "peer_id": self._peer_id,
                "held_bytes": self._total,
                "max_message_bytes": self.max_bytes,
            },
        )
        for stream in transport._inbound_streams.values():
            stream.reassembly.clear()
        # Closed from a task of its own: this runs inside the DTLS task that close() cancels.
        self._closing = asyncio.get_running_loop().create_task(self._connection.close())


def cap_inbound_messages(
    connection: RTCPeerConnection, max_bytes: int, peer_id: str
) -> InboundMessageCap:
    """Hold ``connection``'s unfinished inbound messages to ``max_bytes`` in all; a peer
    that sends more is disconnected. Call it before the connection connects."""
    return InboundMessageCap(connection, max_bytes, peer_id)
