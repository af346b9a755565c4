"""Fewer datagrams per data-channel message: delayed SACKs and chunks bundled per packet.

aiortc's SCTP transport (this targets aiortc 1.16.0) sends every chunk as a packet of
its own, each one DTLS record and one UDP datagram, and answers every packet that
carries DATA with a SACK at once. A Team API call is then four datagrams (request, its
SACK, response, its SACK), each costing encryption, a checksum and a system call on
one side and the same again to receive it on the other.

``BundlingSctpTransport`` changes two things, both allowed by RFC 4960:

* SACKs are delayed (section 6.2): one is sent after every second packet with DATA;
  at once for a packet that finds or leaves a gap, carries a duplicate or a FORWARD
  TSN, or arrives while the association is not established; otherwise within
  ``SACK_DELAY_SECONDS``. A SACK still owed when DATA goes out rides in its packet.
* DATA and SACK chunks produced while one inbound packet is handled, or while one
  flush of the data-channel queue or one transmission runs, are bundled (section 6.10):
  the SACK first, then as many DATA chunks as fit in ``SCTP_MAX_PACKET_LENGTH``. Every
  other chunk is sent alone, as before, after whatever was pending.

A request and its response are then two datagrams, and several messages sent in one
tick share packets. Nothing on the wire is new, so the other side may be Chromium or
an unpatched aiortc.

The override reaches into aiortc's private methods, so ``bundle_sctp`` first checks
that the installed aiortc is the version written for and that the source of every
method relied on is unchanged; otherwise it logs why and leaves the connection as
aiortc made it.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
from functools import cache
from importlib.metadata import version
from struct import pack
from typing import Any

import aiortc.rtcsctptransport as sctp
from aiortc import RTCPeerConnection
from aiortc.rtcsctptransport import (
    SCTP_COMMON_HEADER_LENGTH,
    SCTP_MAX_PACKET_LENGTH,
    Chunk,
    DataChunk,
    ForwardTsnChunk,
    InitChunk,
    RTCSctpTransport,
    SackChunk,
    parse_packet,
)
from google_crc32c import value as crc32c  # the checksum aiortc uses

log = logging.getLogger(__name__)

AIORTC_VERSION = "1.16.0"
# RFC 4960 section 6.2: SHOULD be 200 ms, MUST NOT exceed 500 ms.
SACK_DELAY_SECONDS = 0.2
# RFC 4960 section 6.2: a SACK for at least every second packet with DATA.
SACK_EVERY_PACKETS = 2
# The first 16 hex digits of the SHA-256 of the source of what the override replaces,
# calls or reproduces, in aiortc 1.16.0.
AIORTC_SOURCE_SHA256 = {
    "RTCSctpTransport.__init__": "294b0e5108438509",
    "RTCSctpTransport._handle_data": "8661b724e20776bb",
    "RTCSctpTransport._send_chunk": "eb2f909e3c2ff5cc",
    "RTCSctpTransport._send_sack": "ac92513522fa60e7",
    "RTCSctpTransport._transmit": "aa8941d5f8f020e8",
    "RTCSctpTransport._data_channel_flush": "d5f055f33db1abff",
    "RTCSctpTransport._set_state": "72015aed4aa46827",
    "RTCSctpTransport._receive_data_chunk": "790c2bb8cd0f5dd7",
    "RTCSctpTransport._receive_forward_tsn_chunk": "a7b72a09e9c4bb20",
    "serialize_packet": "5731d38491422e4c",
}


def _source_digest(qualified_name: str) -> str:
    target: Any = sctp
    for part in qualified_name.split("."):
        target = getattr(target, part)
    return hashlib.sha256(inspect.getsource(target).encode()).hexdigest()[:16]


@cache
def aiortc_mismatch() -> str | None:
    """Why the override cannot apply to the installed aiortc, or None when it can."""
    installed = version("aiortc")
    if installed != AIORTC_VERSION:
        return f"aiortc {installed} is installed, the override is written for {AIORTC_VERSION}"
    for name, expected in AIORTC_SOURCE_SHA256.items():
        try:
            digest = _source_digest(name)
        except (AttributeError, OSError, TypeError):
            return f"aiortc has no readable {name}"
        if digest != expected:
            return f"aiortc's {name} differs from the one the override is written for"
    return None


def _packet(header: bytes, body: bytes) -> bytes:
    checksum = crc32c(header + b"\x00\x00\x00\x00" + body)
    return header + pack("<L", checksum) + body


class BundlingSctpTransport(RTCSctpTransport):
    """aiortc's SCTP transport with delayed SACKs and DATA bundled into shared packets.

    Only ever made by ``adopt`` from a transport aiortc created (``bundle_sctp``)."""

    sack_delay = SACK_DELAY_SECONDS
    _bundle_depth: int
    _bundle_sack: bytes | None
    _bundle_data: list[bytes]
    _sack_timer: asyncio.TimerHandle | None
    _sack_task: asyncio.Future[None] | None
    _packets_unacked: int

    @classmethod
    def adopt(cls, transport: RTCSctpTransport) -> None:
        """Turn ``transport`` into one of these; it must not have started yet."""
        transport.__class__ = cls
        assert isinstance(transport, cls)
        transport._bundle_depth = 0
        transport._bundle_sack = None
        transport._bundle_data = []
        transport._sack_timer = None
        transport._sack_task = None
        transport._packets_unacked = 0

    # --- bundling -----------------------------------------------------------------------

    async def _send_chunk(self, chunk: Chunk) -> None:
        if isinstance(chunk, DataChunk):
            if self._sack_needed:
                self._bundle_depth += 1  # the SACK waits for this DATA
                try:
                    await self._send_sack()
                finally:
                    self._bundle_depth -= 1
            self._bundle_data.append(bytes(chunk))
        elif isinstance(chunk, SackChunk):
            self._bundle_sack = bytes(chunk)  # a later SACK says all an earlier one did
        else:
            # Control chunks other than SACK go alone, after what is pending (section 6.10:
            # they precede DATA in a packet, and INIT, INIT ACK, SHUTDOWN COMPLETE are never
            # bundled).
            await self._flush_bundle()
            await super()._send_chunk(chunk)
            return
        if not self._bundle_depth:
            await self._flush_bundle()

    async def _flush_bundle(self) -> None:
        chunks = self._bundle_data
        if self._bundle_sack is not None:
            chunks.insert(0, self._bundle_sack)
        self._bundle_sack, self._bundle_data = None, []
        header = pack("!HHL", self._local_port, self._remote_port, self._remote_verification_tag)
        room = SCTP_MAX_PACKET_LENGTH - SCTP_COMMON_HEADER_LENGTH
        body = b""
        for chunk in chunks:
            if body and len(body) + len(chunk) > room:
                await self.transport._send_data(_packet(header, body))
                body = b""
            body += chunk
        if body:
            await self.transport._send_data(_packet(header, body))

    async def _transmit(self) -> None:
        self._bundle_depth += 1
        try:
            await super()._transmit()
        finally:
            self._bundle_depth -= 1
        if not self._bundle_depth:
            await self._flush_bundle()

    async def _data_channel_flush(self) -> None:
        self._bundle_depth += 1
        try:
            await super()._data_channel_flush()
        finally:
            self._bundle_depth -= 1
        if not self._bundle_depth:
            await self._flush_bundle()

    # --- delayed SACKs ------------------------------------------------------------------

    async def _handle_data(self, data: bytes) -> None:
        # aiortc's _handle_data, with the SACK decision of ``_sack_now``.
        try:
            _, _, verification_tag, chunks = parse_packet(data)
        except ValueError:
            return
        if any(isinstance(chunk, InitChunk) for chunk in chunks):
            if len(chunks) != 1:
                return
            expected_tag = 0
        else:
            expected_tag = self._local_verification_tag
        if verification_tag != expected_tag:
            return
        # Each packet that leaves a gap open, and the one that fills it, is acknowledged at
        # once (section 6.7), so a retransmission is too.
        gaps_before = bool(self._sack_misordered)
        self._bundle_depth += 1
        try:
            for chunk in chunks:
                await self._receive_chunk(chunk)
            if self._sack_needed:
                if any(isinstance(chunk, DataChunk) for chunk in chunks):
                    self._packets_unacked += 1
                if gaps_before or self._sack_now(chunks):
                    await self._send_sack()
                elif self._sack_timer is None:
                    loop = asyncio.get_running_loop()
                    self._sack_timer = loop.call_later(self.sack_delay, self._sack_due)
        finally:
            self._bundle_depth -= 1
        if not self._bundle_depth:
            await self._flush_bundle()

    def _sack_now(self, chunks: list[Chunk]) -> bool:
        return (
            self._packets_unacked >= SACK_EVERY_PACKETS
            or bool(self._sack_misordered or self._sack_duplicates)  # section 6.7
            or self._association_state != self.State.ESTABLISHED
            or any(isinstance(chunk, ForwardTsnChunk) for chunk in chunks)
        )

    def _sack_due(self) -> None:
        self._sack_timer = None
        if self._sack_needed and self._association_state != self.State.CLOSED:
            self._sack_task = asyncio.ensure_future(self._send_due_sack())

    async def _send_due_sack(self) -> None:
        try:
            if self._sack_needed:
                await self._send_sack()
        except ConnectionError:
            pass  # the DTLS transport closed meanwhile: there is nobody to acknowledge

    async def _send_sack(self) -> None:
        self._cancel_sack_timer()
        self._packets_unacked = 0
        await super()._send_sack()

    def _cancel_sack_timer(self) -> None:
        if self._sack_timer is not None:
            self._sack_timer.cancel()
            self._sack_timer = None

    def _set_state(self, state: RTCSctpTransport.State) -> None:
        super()._set_state(state)
        if state == self.State.CLOSED:
            self._cancel_sack_timer()


def bundle_sctp(connection: RTCPeerConnection) -> bool:
    """Make ``connection``'s SCTP transport a ``BundlingSctpTransport`` as soon as aiortc
    creates it; call before the connection connects. False, and logged, when the
    installed aiortc is not the one the override is written for."""
    mismatch = aiortc_mismatch()
    if mismatch is not None:
        log.warning("SCTP bundling not applied: %s", mismatch)
        return False

    def adopt() -> None:
        transport = connection.sctp
        if transport is not None and not isinstance(transport, BundlingSctpTransport):
            BundlingSctpTransport.adopt(transport)

    # A plain function runs inside the state change, before aiortc starts SCTP on
    # "connected", whichever step (createDataChannel, setRemoteDescription) made it.
    connection.on("connectionstatechange", adopt)
    adopt()
    return True
