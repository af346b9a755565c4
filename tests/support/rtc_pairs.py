"""Two real aiortc peers in this process, joined on loopback by one open data channel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiortc import RTCDataChannel, RTCPeerConnection


@dataclass
class ChannelPair:
    offerer: RTCPeerConnection
    answerer: RTCPeerConnection
    # The offerer's channel and the answerer's end of it.
    near: RTCDataChannel
    far: RTCDataChannel


@asynccontextmanager
async def channel_pair(
    label: str, prepare: Callable[[RTCPeerConnection, RTCPeerConnection], None] | None = None
) -> AsyncIterator[ChannelPair]:
    """Peers with channel ``label`` open between them; ``prepare`` sees both connections
    before they connect. Both are closed on the way out."""
    offerer, answerer = RTCPeerConnection(), RTCPeerConnection()
    if prepare is not None:
        prepare(offerer, answerer)
    near = offerer.createDataChannel(label)
    far: asyncio.Future[RTCDataChannel] = asyncio.get_running_loop().create_future()
    answerer.on("datachannel", far.set_result)
    opened = asyncio.Event()
    near.on("open", opened.set)
    await offerer.setLocalDescription(await offerer.createOffer())
    await answerer.setRemoteDescription(offerer.localDescription)
    await answerer.setLocalDescription(await answerer.createAnswer())
    await offerer.setRemoteDescription(answerer.localDescription)
    try:
        async with asyncio.timeout(30):
            await opened.wait()
            joined = ChannelPair(offerer, answerer, near, await far)
        yield joined
    finally:
        await offerer.close()
        await answerer.close()
