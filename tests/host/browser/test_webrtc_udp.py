"""WebRTC in real Chromium sends no UDP of its own: a page's STUN and TURN servers (with
usernames the page chose) at a loopback UDP listener get no datagram, in a persistent
partition's browser and in the private partitions' one alike. UDP leaves only through a
proxy, and the browser's proxies carry none.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from server.common.browser_address_policy import AddressPolicy
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from tests.support.chromium import full_browser
from tests.support.sites import Site, pages_app, serving

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEAM = "team-a"
AGENT = Caller.agent("agent-1", "thread-1")
ORIGIN_HOST = "127.0.0.2"

# Gathers ICE candidates with the listener as STUN and TURN server and settles when the
# gathering is complete, giving the candidates' types.
GATHER = """async (port) => {
  const pc = new RTCPeerConnection({iceServers: [
    {urls: `stun:127.0.0.1:${port}`},
    {urls: `turn:127.0.0.1:${port}?transport=udp`, username: 'page-chosen', credential: 'x'},
  ]});
  pc.createDataChannel('probe');
  const types = [];
  const complete = new Promise((resolve) => {
    pc.onicecandidate = (event) => {
      if (event.candidate) types.push(event.candidate.type);
      else resolve();
    };
  });
  await pc.setLocalDescription(await pc.createOffer());
  await complete;
  pc.close();
  return types;
}"""


@dataclass
class Datagrams(asyncio.DatagramProtocol):
    """Every datagram that reached the listener."""

    received: list[bytes] = field(default_factory=list)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.received.append(data)


@pytest_asyncio.fixture(loop_scope="module")
async def listener() -> AsyncIterator[tuple[Datagrams, int]]:
    """A UDP listener on loopback, where a page points its STUN and TURN servers."""
    heard = Datagrams()
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        lambda: heard, local_addr=("127.0.0.1", 0)
    )
    try:
        yield heard, transport.get_extra_info("sockname")[1]
    finally:
        transport.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def origin() -> AsyncIterator[Site]:
    app = pages_app({"/page": "<!doctype html><title>origin</title>"})
    async with serving(app, ORIGIN_HOST) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserEngine]:
    chromium = full_browser()
    policy = AddressPolicy.from_entries([ORIGIN_HOST])
    folder: Path = tmp_path_factory.mktemp("webrtc")
    async with BrowserEngine(folder, chromium=chromium, address_policy=policy) as running:
        yield running


@pytest.mark.parametrize(
    "partition", [Partition.shared(), Partition.private()], ids=["shared", "private"]
)
async def test_a_pages_stun_and_turn_servers_get_no_datagram(
    engine: BrowserEngine,
    origin: Site,
    listener: tuple[Datagrams, int],
    partition: Partition,
) -> None:
    heard, port = listener
    tab = await engine.open_tab(
        TEAM, partition, url=origin.url("/page"), owner_agent_id=AGENT.agent_id
    )
    gathered = await engine.run(
        TEAM, tab.id, AGENT, lambda page: page.evaluate(GATHER, port), deadline=60
    )
    await engine.close_tab(TEAM, tab.id, AGENT)
    types = gathered.value
    assert isinstance(types, list)
    assert "srflx" not in types  # no STUN answer came back either
    assert "relay" not in types
    assert heard.received == []
