"""Sharing this computer as a proxy egress for a host's browser profiles.

``share_egress`` records this computer as the member's proxy on the host
(``browser-proxies-v1/share_computer``) and opens the ``egress`` data channel. Each
stream the host opens names a target; this side resolves the name itself, dials only a
public address (``MemberPolicy``: never loopback, private, link-local, CGNAT, multicast
or reserved ones, nor this computer's own addresses or another device on its links, so the
host cannot reach this network; its interface table re-read while sharing lasts) and pipes
bytes both ways with per-stream flow control.
Nothing about a target is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from peer.connection import HostConnection
from peer.own_network import InterfaceTable, read_interface_table
from server.common.browser_address_policy import BLOCKS, IPNetwork, Row
from server.common.egress import (
    CHUNK,
    EgressStream,
    Multiplexer,
    Refusal,
    StreamReset,
    channel_multiplexer,
)
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    resolve_pinned,
    system_resolve,
)

log = logging.getLogger(__name__)

EGRESS_LABEL = "egress"
_DIAL_SECONDS = 10.0
# How stale the member's interface table may be: a new prefix, Wi-Fi or VPN while sharing.
TABLE_REREAD_SECONDS = 10.0


class EgressShare:
    """An open egress channel; ``stop`` (or leaving the ``async with``) stops sharing."""

    def __init__(
        self,
        connection: HostConnection,
        policy: PublicOnlyPolicy | None,
        resolver: Resolver,
        proxy: dict[str, Any],
    ) -> None:
        self.proxy = proxy
        self._channel = connection.connection.createDataChannel(EGRESS_LABEL)
        self.stopped = asyncio.Event()
        dialer = TargetDialer(policy, resolver)
        self.mux = channel_multiplexer(
            self._channel,
            accept=lambda stream, host, port: dialer.dial(self.mux, stream, host, port),
        )

        def on_close() -> None:
            self._ended()

        self._channel.on("close", on_close)

        self._watch = asyncio.ensure_future(self._until_closed(connection))

    async def _until_closed(self, connection: HostConnection) -> None:
        await connection.closed.wait()
        self._ended()

    async def opened(self) -> None:
        if self._channel.readyState == "open":
            return
        ready = asyncio.Event()
        self._channel.on("open", ready.set)
        async with asyncio.timeout(15):
            await ready.wait()

    async def stop(self) -> None:
        """Stops sharing: the channel closes and every stream with it."""
        self._channel.close()
        self._ended()
        self._watch.cancel()

    async def __aenter__(self) -> EgressShare:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    def _ended(self) -> None:
        self.mux.close()
        self.stopped.set()


class TargetDialer:
    """Connects the host's streams: resolves once, dials only what ``policy`` permits.

    Without a ``policy``, ``member_policy`` of this computer's interface table
    (``read_table``), re-read at most every ``TABLE_REREAD_SECONDS`` of ``clock`` while
    sharing lasts, and rebuilt only when the table changed.
    """

    def __init__(
        self,
        policy: PublicOnlyPolicy | None = None,
        resolver: Resolver = system_resolve,
        *,
        read_table: Callable[[], InterfaceTable] = read_interface_table,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._resolver = resolver
        self._fixed = policy
        self._read_table = read_table
        self._clock = clock
        self._table = InterfaceTable()
        self._member: MemberPolicy | None = None
        self._read_at = 0.0
        if policy is None:
            self.policy()

    def policy(self) -> PublicOnlyPolicy:
        """What may be dialed now."""
        if self._fixed is not None:
            return self._fixed
        now = self._clock()
        if self._member is None or now - self._read_at >= TABLE_REREAD_SECONDS:
            self._read_at = now
            try:
                table = self._read_table()
            except Exception:
                if self._member is None:
                    raise  # nothing known of this computer's links: nothing is dialled
                # The links as last read stand until the next read.
                log.warning("the interface table could not be read again", exc_info=True)
                return self._member
            if self._member is None or table != self._table:
                self._table, self._member = table, member_policy(table)
        return self._member

    async def dial(self, mux: Multiplexer, stream: EgressStream, host: str, port: int) -> None:
        try:
            address = await resolve_pinned(host, port, self.policy(), resolver=self._resolver)
        except NonPublicAddress:
            mux.refuse(stream, Refusal.POLICY)
            return
        except NameNotResolved:
            mux.refuse(stream, Refusal.UNRESOLVED)
            return
        try:
            # The vetted address itself: no second resolution between check and dial.
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(str(address), port), _DIAL_SECONDS
            )
        except (OSError, TimeoutError):
            mux.refuse(stream, Refusal.UNREACHABLE)
            return
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        mux.accepted(stream)
        await _pipe(stream, reader, writer)


async def _pipe(
    stream: EgressStream, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    async def outward() -> None:
        while data := await reader.read(CHUNK):
            await stream.write(data)
        await stream.close()

    async def inward() -> None:
        while data := await stream.read(CHUNK):
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()

    tasks = [asyncio.ensure_future(outward()), asyncio.ensure_future(inward())]
    try:
        await asyncio.gather(*tasks)
    except (StreamReset, OSError, ConnectionError):
        pass
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        stream.abort()
        writer.close()


@dataclass(frozen=True)
class MemberPolicy(PublicOnlyPolicy):
    """``PublicOnlyPolicy`` that also refuses, as this computer's own, every prefix in
    ``on_link``: a neighbour's global IPv6 address is public, but it is the member's
    network."""

    on_link: tuple[IPNetwork, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        # After the own addresses, before the table's rows (whose "global unicast" permits).
        table = len(self.rows) - len(BLOCKS)
        neighbours = tuple(Row(network, "host") for network in self.on_link)
        rows = (*self.rows[:table], *neighbours, *self.rows[table:])
        object.__setattr__(self, "rows", rows)


def member_policy(table: InterfaceTable | None = None) -> MemberPolicy:
    """What a shared computer dials for the host: public addresses only, never one of its
    own (where a service listening on every interface of this computer answers) nor one
    on its links. ``table`` is this computer's interface table, read now unless given."""
    table = read_interface_table() if table is None else table
    return MemberPolicy(own_addresses=table.own_addresses(), on_link=table.on_link_networks())


async def share_egress(
    connection: HostConnection,
    *,
    label: str = "",
    policy: PublicOnlyPolicy | None = None,
    resolver: Resolver = system_resolve,
) -> EgressShare:
    """Share this computer with the host of ``connection`` (owner or admin only).

    ``policy`` decides which resolved addresses may be dialed: ``member_policy``, kept
    current with this computer's interface table, unless a caller (a test) passes a policy
    with an exact loopback endpoint allowed.
    """
    proxy = await connection.call("browser-proxies-v1/share_computer", {"label": label})
    share = EgressShare(connection, policy, resolver, proxy)
    await share.opened()
    return share
