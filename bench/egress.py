"""Benchmark of member egress and of the SOCKS5 relay, between two real processes.

Run from the repository root with the project venv::

    .venv/bin/python bench/egress.py --megabytes 64 [--window N] [--link-window N]

This process plays the host: an aiortc ``RTCPeerConnection``, the egress multiplexer
on an ``egress`` data channel, and the loopback relay the browser would use, with the
member's computer as its exit. A child process plays the member: the other peer
connection, the member's dialer (a policy allowing exactly its own fixture port) and
a fixture TCP site that answers ``/bulk`` with ``--megabytes`` and ``/small`` with 1 KiB.
Offer and answer travel over the child's stdin and stdout.

* ``raw``: the child sends ``--megabytes`` on a second data channel of the same
  connection as fast as its buffer allows; the rate this side receives.
* ``egress``: an HTTP client here downloads ``/bulk`` through the relay, so through
  the multiplexer, the channel and the member's dial. Goal: >= 80 % of ``raw``.
* ``small``: p95 of ``/small`` requests through the relay, one after another, idle
  and during a concurrent bulk download. Goal: during <= 2x idle.
* ``socks5``: ``/bulk`` from a local site through microsocks, once through the relay
  (with its sign-in) and once with a direct SOCKS5 connection from here (skipped when
  microsocks is not installed).

Results are printed and written to ``bench/results/egress.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import ipaddress
import json
import shutil
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from aiortc import RTCPeerConnection, RTCSessionDescription  # noqa: E402

from server.common.egress import (  # noqa: E402
    CHANNEL_HIGH_WATER,
    CHANNEL_LOW_WATER,
    LINK_WINDOW,
    WINDOW,
    Multiplexer,
    channel_multiplexer,
)
from server.common.public_addresses import PublicOnlyPolicy  # noqa: E402
from server.host.proxies.addresses import ProxyAddress  # noqa: E402
from server.host.proxies.exits import Exit, ExitRefused, Socks5Exit, Upstream  # noqa: E402
from server.host.proxies.judge import ProxyAddressJudge  # noqa: E402
from server.host.proxies.relay import LoopbackRelay  # noqa: E402

RESULTS_FILE = ROOT / "bench" / "results" / "egress.json"
SMALL = 1024
CHUNK = 16 * 1024


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


# --- the fixture site (in the member process, and here for the SOCKS5 part) ---------


async def serve_site(megabytes: int) -> asyncio.Server:
    bulk = b"x" * (megabytes * 1024 * 1024)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        body = bulk if b" /bulk " in head.split(b"\r\n", 1)[0] else b"s" * SMALL
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        )
        view = memoryview(body)
        for start in range(0, len(view), 256 * 1024):
            writer.write(view[start : start + 256 * 1024])
            await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0)


async def fetch_via(relay: LoopbackRelay, port: int, path: str) -> int:
    """GET ``path`` of the site on ``port`` through ``relay``; the bytes received."""
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    token = base64.b64encode(f"{relay.username}:{relay.password}".encode()).decode()
    writer.write(
        f"GET http://127.0.0.1:{port}{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Proxy-Authorization: Basic {token}\r\n\r\n".encode()
    )
    total = 0
    while data := await reader.read(256 * 1024):
        total += len(data)
    writer.close()
    return total


# As the product runs: both ends delay SACKs and bundle chunks (rtc.sctp_bundling).
SCTP_BUNDLING = {"on": True}


def new_connection() -> RTCPeerConnection:
    from server.common.sctp_bundling import bundle_sctp

    pc = RTCPeerConnection()
    if SCTP_BUNDLING["on"]:
        bundle_sctp(pc)
    return pc


# --- the member process --------------------------------------------------------------


async def member(megabytes: int, window: int, link_window: int) -> None:
    from peer.egress import TargetDialer

    site = await serve_site(megabytes)
    port = site.sockets[0].getsockname()[1]
    policy = PublicOnlyPolicy(
        allowed_endpoints=frozenset({(ipaddress.IPv4Address("127.0.0.1"), port)})
    )
    dialer = TargetDialer(policy)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pc = new_connection()
    done = asyncio.Event()

    def on_channel(channel: Any) -> None:
        ch = channel
        if ch.label == "egress":
            mux = channel_multiplexer(
                ch,
                accept=lambda s, h, p: dialer.dial(mux, s, h, p),
                window=window,
                link_window=link_window,
            )
        elif ch.label == "raw":
            ch.on(
                "message",
                lambda data: (
                    loop.create_task(send_raw(ch, megabytes)) if data == "go" else done.set()
                ),
            )

    pc.on("datachannel", on_channel)
    offer = json.loads(await reader.readline())
    await pc.setRemoteDescription(RTCSessionDescription(**offer))
    await pc.setLocalDescription(await pc.createAnswer())
    print(
        json.dumps(
            {"sdp": pc.localDescription.sdp, "type": pc.localDescription.type, "port": port}
        ),
        flush=True,
    )
    await reader.readline()  # the host closes stdin when it is done
    await pc.close()
    site.close()


def writable(channel: Any) -> Callable[[], Awaitable[None]]:
    low = asyncio.Event()
    channel.bufferedAmountLowThreshold = CHANNEL_LOW_WATER
    channel.on("bufferedamountlow", low.set)

    async def wait() -> None:
        while channel.bufferedAmount > CHANNEL_HIGH_WATER:
            low.clear()
            await low.wait()

    return wait


async def send_raw(channel: Any, megabytes: int) -> None:
    wait = writable(channel)
    block = b"r" * CHUNK
    for _ in range(megabytes * 1024 * 1024 // CHUNK):
        await wait()
        channel.send(block)


# --- the host process ----------------------------------------------------------------


class MuxExit:
    def __init__(self, mux: Multiplexer) -> None:
        self._mux = mux

    async def open(self, host: str, port: int) -> Upstream:
        from server.host.egress.channels import StreamUpstream

        try:
            return StreamUpstream(await self._mux.open(host, port))
        except Exception:
            raise ExitRefused("offline") from None


async def host(megabytes: int, requests: int, window: int, link_window: int) -> dict[str, object]:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--member",
        "--megabytes",
        str(megabytes),
        "--window",
        str(window),
        "--link-window",
        str(link_window),
        "--sctp-bundling",
        "on" if SCTP_BUNDLING["on"] else "off",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    pc = new_connection()
    egress = pc.createDataChannel("egress")
    raw = pc.createDataChannel("raw")
    mux = channel_multiplexer(egress, window=window, link_window=link_window)
    received = 0
    raw_done = asyncio.Event()
    target = megabytes * 1024 * 1024

    def on_raw(data: bytes | str) -> None:
        nonlocal received
        received += len(data)
        if received >= target:
            raw_done.set()

    raw.on("message", on_raw)
    await pc.setLocalDescription(await pc.createOffer())
    child.stdin.write(
        (
            json.dumps({"sdp": pc.localDescription.sdp, "type": pc.localDescription.type}) + "\n"
        ).encode()
    )
    answer = json.loads(await child.stdout.readline())
    port = answer.pop("port")
    await pc.setRemoteDescription(RTCSessionDescription(**answer))
    opened = asyncio.Event()
    if egress.readyState == "open" and raw.readyState == "open":
        opened.set()
    for channel in (egress, raw):
        channel.on(
            "open", lambda: opened.set() if egress.readyState == raw.readyState == "open" else None
        )
    await asyncio.wait_for(opened.wait(), 30)
    results: dict[str, object] = {
        "megabytes": megabytes,
        "window_KiB": window // 1024,
        "link_window_KiB": link_window // 1024,
    }

    async def raw_rate() -> float:
        nonlocal received
        received = 0
        raw_done.clear()
        start = time.perf_counter()
        raw.send("go")
        await raw_done.wait()
        return target / (time.perf_counter() - start) / 1e6

    # Twice, the better run counts: the first one also warms the association up.
    raw_best = max([await raw_rate(), await raw_rate()])
    results["raw_MBps"] = round(raw_best, 1)

    async with LoopbackRelay(MuxExit(mux)) as relay:
        start = time.perf_counter()
        got = await fetch_via(relay, port, "/bulk")
        egress_rate = got / (time.perf_counter() - start) / 1e6
        results["egress_MBps"] = round(egress_rate, 1)
        results["egress_vs_raw"] = round(egress_rate / raw_best, 3)

        async def small_latencies() -> list[float]:
            times = []
            for _ in range(requests):
                t = time.perf_counter()
                await fetch_via(relay, port, "/small")
                times.append((time.perf_counter() - t) * 1000)
            return times

        idle = await small_latencies()
        bulk = asyncio.ensure_future(fetch_via(relay, port, "/bulk"))
        during = await small_latencies()
        results["bulk_finished_during_small"] = bulk.done()
        await bulk
        results["small_p95_idle_ms"] = round(percentile(idle, 0.95), 2)
        results["small_p95_during_bulk_ms"] = round(percentile(during, 0.95), 2)
        results["small_during_vs_idle"] = round(
            percentile(during, 0.95) / percentile(idle, 0.95), 2
        )

    child.stdin.close()
    await child.wait()
    await pc.close()
    results.update(await socks5(megabytes))
    return results


async def socks5(megabytes: int) -> dict[str, object]:
    tool = shutil.which("microsocks")
    if tool is None:
        return {"socks5": "skipped: microsocks is not installed (make proxy-tools)"}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        socks_port = probe.getsockname()[1]
    proxy = await asyncio.create_subprocess_exec(
        tool,
        "-i",
        "127.0.0.1",
        "-p",
        str(socks_port),
        "-u",
        "bench",
        "-P",
        "pw",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    site = await serve_site(megabytes)
    port = site.sockets[0].getsockname()[1]
    # The bench's own microsocks on loopback, allowed as an on-premises proxy would be.
    exit_: Exit = Socks5Exit(
        ProxyAddress("socks5", "127.0.0.1", socks_port, "bench", "pw"),
        timeout=10,
        judge=ProxyAddressJudge(PublicOnlyPolicy.from_entries(["127.0.0.1"])),
    )
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                _, w = await asyncio.open_connection("127.0.0.1", socks_port)
                w.close()
                break
            await asyncio.sleep(0.05)
        start = time.perf_counter()
        upstream = await exit_.open("127.0.0.1", port)
        await upstream.write(f"GET /bulk HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        got = 0
        while data := await upstream.read(256 * 1024):
            got += len(data)
        await upstream.close()
        direct = got / (time.perf_counter() - start) / 1e6
        async with LoopbackRelay(exit_) as relay:
            start = time.perf_counter()
            got = await fetch_via(relay, port, "/bulk")
            relayed = got / (time.perf_counter() - start) / 1e6
    finally:
        proxy.terminate()
        await proxy.wait()
        site.close()
    return {
        "socks5_direct_MBps": round(direct, 1),
        "socks5_relay_MBps": round(relayed, 1),
        "socks5_relay_vs_direct": round(relayed / direct, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=64)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument(
        "--window", type=int, default=WINDOW, help="per-stream credit in bytes (the default's)"
    )
    parser.add_argument(
        "--link-window",
        type=int,
        default=LINK_WINDOW,
        help="data bytes in flight on the channel, all streams (the default's)",
    )
    parser.add_argument(
        "--sctp-bundling",
        choices=["on", "off"],
        default="on",
        help="delayed SACKs and bundled chunks on both ends, as the product runs (default on)",
    )
    parser.add_argument("--member", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    SCTP_BUNDLING["on"] = args.sctp_bundling == "on"
    if args.member:
        asyncio.run(member(args.megabytes, args.window, args.link_window))
        return
    results = asyncio.run(host(args.megabytes, args.requests, args.window, args.link_window))
    results = {"sctp_bundling": args.sctp_bundling, **results}
    for key, value in results.items():
        print(f"{key:28} {value}")
    RESULTS_FILE.parent.mkdir(exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
