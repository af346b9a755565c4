"""Agent turn benchmark: first text to a watching peer, tool-call overhead, concurrent turns.

Run from the repository root with the project venv::

    .venv/bin/python bench/agent_turn.py

The host side runs in a thread of this process with an event loop of its own, as
``crewhost serve`` runs it: a hub on a free loopback port (SQLite in a fresh data
folder) and its built-in host (``HostServices``, linked over loopback, its browser
started on the first turn). The client side runs in the main thread: the local fake
Anthropic Messages API of the tests (``tests/support/fakes/anthropic.py``, the real
wire format, streamed) and one member connected as an aiortc peer, which configures
the team's Anthropic provider (key and base URL) and an agent through the Team API,
then sends messages through ``threads-v1/send`` and follows the events. The fake
writes each event of a reply as its own piece, ``--piece-ms`` (5) apart, except that
the first piece carries the reply's start and its first text delta.

* ``first delta``: ``--turns`` (200) text turns one after another, after
  ``--warmup`` (10): from the moment the fake has written the first piece of the reply
  (its first byte) to the first ``turn-text`` event of the turn reaching the peer.
* ``tool overhead``: turns whose first reply asks for ``--calls`` (10) ``list_tabs``
  calls at once, until ``--tool-calls`` (200) calls ran: per call, the time the turn
  loop spent on it (``turn_loop._run_call``: consent check, events, result summary,
  transcript) minus the tool's own time (``call_tool``), both measured on the host.
* ``concurrent``: ``--rounds`` (5) rounds of 20 turns on 20 threads at once, each a
  reply with text and one ``list_tabs`` call and then a text answer: per round the
  time until the last ``turn-finished``; per turn, from its send to its end, and its
  first delta (the provider's first text to the peer) while the other 19 run.

The host loop's worst stall is measured in each phase by a heartbeat on the host loop
(the idea of ``tests/support/loop_watch.py``): how much later than asked a 5 ms sleep
woke up, as measured and without the time the host thread waited for a CPU
(``/proc/self/task/<id>/schedstat``); beside it, the longest garbage collection. The
client shares the process (and the GIL) with the host, so the numbers lean
pessimistic; the machine's load average is printed with them. Results are printed and
written to ``bench/results/agent_turn.json``.

Goals: first delta p95 <= 15 ms after the provider's first byte; tool overhead p95
<= 5 ms; with 20 turns at once, first delta p95 <= 50 ms. The exit status is 1 when a
goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from harness import create_accounts, member_email, percentile
from loop_watch import GcPauses, LoopWatch
from peers import Member, builtin_host_id, sign_in

from peer.connection import HostConnection, connect_to_host
from server.config import load_settings
from server.host.agents import turn_loop
from server.host.tools import catalog
from server.hub.app import build_app
from server.hub.container import Hub
from server.serve import builtin_host

ROOT = Path(__file__).resolve().parents[1]
# The fake model provider is the tests' own: one wire format, checked like the real API.
sys.path.insert(0, str(ROOT))
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents  # noqa: E402
from tests.support.fakes.server import RecordedRequest, StreamReply  # noqa: E402

GOAL_FIRST_DELTA_P95_MS = 15.0
GOAL_TOOL_OVERHEAD_P95_MS = 5.0
GOAL_CONCURRENT_DELTA_P95_MS = 50.0
CONCURRENT_THREADS = 20
TURN_WAIT_SECONDS = 60.0
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "agent_turn.json"
WORDS = ("The", " page", " lists", " three", " tabs", " and", " all", " are", " idle", ".")


# --- the host side: its own thread and loop -------------------------------------------


@dataclass
class ToolTimes:
    """Per tool call, on the host: the loop's time around it and the tool's own time."""

    loop: list[float] = field(default_factory=list)
    tool: list[float] = field(default_factory=list)

    def reset(self) -> None:
        self.loop.clear()
        self.tool.clear()


def time_tool_calls(times: ToolTimes) -> None:
    """Wrap the turn loop's per-call step and its tool call with timers."""
    run_call, call_tool = turn_loop._run_call, catalog.call_tool

    async def timed_run_call(*args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        try:
            return await run_call(*args, **kwargs)
        finally:
            times.loop.append(time.perf_counter() - started)

    async def timed_call_tool(*args: Any, **kwargs: Any) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return await call_tool(*args, **kwargs)
        finally:
            times.tool.append(time.perf_counter() - started)

    turn_loop._run_call = timed_run_call
    # The loop calls the catalog's function through its own module's name: that is the one to wrap.
    setattr(turn_loop, "call_tool", timed_call_tool)  # noqa: B010


class HostThread:
    """The hub and its built-in host, served from a thread with its own event loop."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.watch = LoopWatch()
        self.gc = GcPauses()
        self.tools = ToolTimes()
        self.url = ""
        self.setup_code = ""
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="host", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise RuntimeError("the host did not start") from self._failure

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=60)

    async def on_loop(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the host loop and wait until it ran."""
        assert self._loop is not None
        done = asyncio.get_running_loop().create_future()
        here = asyncio.get_running_loop()

        def run() -> None:
            action()
            here.call_soon_threadsafe(done.set_result, None)

        self._loop.call_soon_threadsafe(run)
        await done

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._failure = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        settings = load_settings(
            env={},
            overrides={
                "data_dir": str(self.data_dir),
                "database.url": f"sqlite+aiosqlite:///{self.data_dir / 'crewhost.db'}",
                # The fake provider listens on loopback: a local model server, allowed.
                "host.provider_allowed_hosts": ["127.0.0.1"],
                # A member sending turns back to back is not refused.
                "rtc.team_api_rate": 100_000,
                "rtc.team_api_burst": 100_000,
            },
        )
        hub = Hub.build(settings)
        runner = web.AppRunner(build_app(hub), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        heartbeat = asyncio.ensure_future(self.watch.run())
        try:
            code = await hub.setup.issue_code()
            assert code is not None
            self.setup_code = code
            async with builtin_host(settings, hub, self.url) as host:
                await asyncio.wait_for(host.link.linked.wait(), 30)
                gc.freeze()  # as ``crewhost serve`` does once it has started
                time_tool_calls(self.tools)
                self._ready.set()
                await self._stop.wait()
        finally:
            heartbeat.cancel()
            await runner.cleanup()


# --- the fake provider's replies ------------------------------------------------------


@dataclass(frozen=True)
class EventPieces(StreamReply):
    """A reply written an event at a time; the first piece holds the events up to and
    including the first text delta. ``first_written`` gets the time its write returned."""

    first_written: list[float] = field(default_factory=list)

    def pieces(self, body: bytes) -> Iterator[bytes]:
        events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
        first = next((i for i, e in enumerate(events) if b'"text_delta"' in e), 0)
        yield b"".join(events[: first + 1])
        self.first_written.append(time.perf_counter())
        yield from events[first + 1 :]


def text_reply() -> EventPieces:
    return EventPieces(MessageEvents().text(*WORDS).stop().body())


def tool_reply(calls: int) -> EventPieces:
    events = MessageEvents().text("Looking.")
    for n in range(calls):
        events.tool_use(f"toolu_{n}", "list_tabs", {})
    return EventPieces(events.stop("tool_use").body())


def answered_tools(request: RecordedRequest) -> bool:
    content = request.messages()[-1]["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def first_user_text(request: RecordedRequest) -> str:
    content = request.messages()[0]["content"]
    return content if isinstance(content, str) else str(content[0].get("text", ""))


def concurrent_reply(first_written: dict[str, float]) -> EventPieces:
    """One call and then an answer, whichever thread's request it serves; the first reply of
    a turn records, under the turn's message, when its first text was written."""
    tool, text = tool_reply(1).body, text_reply().body
    assert isinstance(tool, bytes)
    assert isinstance(text, bytes)
    served: list[str] = []

    def body(request: RecordedRequest) -> bytes:
        if answered_tools(request):
            return text
        served.append(first_user_text(request))
        return tool

    class Keyed(EventPieces):
        def pieces(self, body: bytes) -> Iterator[bytes]:
            for n, piece in enumerate(super().pieces(body)):
                yield piece
                if n == 0 and served:  # the first piece's write returned just now
                    first_written[served[0]] = time.perf_counter()

    return Keyed(body)


# --- the client side ------------------------------------------------------------------


@dataclass
class Turn:
    sent_at: float
    first_text_at: float | None = None
    ended_at: float | None = None
    status: str = ""
    tool_outcomes: list[str] = field(default_factory=list)


class Subscriber:
    """Routes a connection's events to the thread they are about, stamped on arrival."""

    def __init__(self, connection: HostConnection) -> None:
        self.connection = connection
        self._queues: dict[str, asyncio.Queue[tuple[float, dict[str, Any]]]] = defaultdict(
            asyncio.Queue
        )
        self._task = asyncio.ensure_future(self._route())

    async def _route(self) -> None:
        while True:
            message = await self.connection.events.get()
            arrived = time.perf_counter()
            data = message.get("data")
            if isinstance(data, dict) and "threadId" in data:
                self._queues[data["threadId"]].put_nowait((arrived, message))

    async def turn(self, thread_id: str, text: str) -> Turn:
        """Send ``text`` in the thread and follow its turn to its end."""
        queue = self._queues[thread_id]
        turn = Turn(time.perf_counter())
        turn_id = (
            await self.connection.call("threads-v1/send", {"threadId": thread_id, "text": text})
        )["turnId"]
        async with asyncio.timeout(TURN_WAIT_SECONDS):
            while turn.ended_at is None:
                arrived, message = await queue.get()
                if message["data"].get("turnId") != turn_id:
                    continue
                if message["event"] == "turn-text" and turn.first_text_at is None:
                    turn.first_text_at = arrived
                elif message["event"] == "tool-call-finished":
                    turn.tool_outcomes.append(message["data"]["summary"])
                elif message["event"] == "turn-finished":
                    turn.ended_at, turn.status = arrived, message["data"]["status"]
        if turn.status != "done":
            raise RuntimeError(f"a turn ended {turn.status}: {message['data']['reason']}")
        if any(outcome != "ok" for outcome in turn.tool_outcomes):
            raise RuntimeError(f"a tool call failed: {turn.tool_outcomes}")
        return turn

    async def close(self) -> None:
        self._task.cancel()


async def new_thread(connection: HostConnection, agent_id: str) -> str:
    return str((await connection.call("threads-v1/start", {"agentId": agent_id}))["id"])


@asynccontextmanager
async def connected_member(host: HostThread, folder: Path) -> AsyncIterator[HostConnection]:
    await create_accounts(host.url, host.setup_code, 1)
    member: Member = await sign_in(host.url, member_email(0), folder)
    try:
        host_id = await builtin_host_id(member)
        connection = await connect_to_host(
            member.hub,
            member.team_id,
            host_id,
            member.known_hosts,
            member.account_id,
            ice_servers=[],
        )
        try:
            yield connection
        finally:
            await connection.close()
    finally:
        await member.hub.close()


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "n": len(ordered),
        "p50_ms": round(percentile(ordered, 0.5) * 1000, 2),
        "p95_ms": round(percentile(ordered, 0.95) * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2) if ordered else 0.0,
    }


async def phase(host: HostThread, run: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Run one phase; its report with the host loop's worst stall meanwhile."""
    await host.on_loop(host.watch.reset)
    await host.on_loop(host.tools.reset)
    host.gc.reset()
    report = await run()
    report["worst_loop_stall_ms"] = round(host.watch.worst * 1000, 2)
    report["worst_loop_stall_without_cpu_wait_ms"] = round(host.watch.worst_own * 1000, 2)
    report["worst_gc_pause_ms"] = round(host.gc.worst * 1000, 2)
    return report


async def bench(host: HostThread, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    async with (
        FakeAnthropic(latency=args.piece_ms / 1000) as fake,
        connected_member(host, folder) as connection,
    ):
        await connection.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.origin + "/v1"}
        )
        await connection.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        agent_id = (await connection.call("agents-v1/create", {"name": "Bench"}))["id"]
        subscriber = Subscriber(connection)

        async def text_turns(count: int) -> list[float]:
            delays = []
            thread_id = ""
            for n in range(count):
                if n % 10 == 0:  # a fresh thread now and then keeps transcripts short
                    thread_id = await new_thread(connection, agent_id)
                reply = text_reply()
                fake.script(reply)
                turn = await subscriber.turn(thread_id, f"Message {n}")
                assert turn.first_text_at is not None
                delays.append(turn.first_text_at - reply.first_written[0])
            return delays

        async def first_delta() -> dict[str, Any]:
            return {"first_delta": stats(await text_turns(args.turns))}

        async def tool_overhead() -> dict[str, Any]:
            while len(host.tools.loop) < args.tool_calls:
                thread_id = await new_thread(connection, agent_id)
                fake.script(tool_reply(args.calls), text_reply())
                await subscriber.turn(thread_id, "List the tabs")
            overheads = [a - b for a, b in zip(host.tools.loop, host.tools.tool, strict=True)]
            return {
                "overhead": stats(overheads),
                "tool_own_time": stats(list(host.tools.tool)),
            }

        async def concurrent() -> dict[str, Any]:
            totals, turns, deltas = [], [], []
            for round_ in range(args.rounds):
                threads = [
                    await new_thread(connection, agent_id) for _ in range(CONCURRENT_THREADS)
                ]
                written: dict[str, float] = {}
                fake.script(*(concurrent_reply(written) for _ in range(2 * CONCURRENT_THREADS)))
                started = time.perf_counter()
                messages = [f"Go {round_}.{n}" for n in range(len(threads))]
                done = await asyncio.gather(
                    *(subscriber.turn(t, m) for t, m in zip(threads, messages, strict=True))
                )
                totals.append(max(t.ended_at or 0.0 for t in done) - started)
                turns += [(t.ended_at or 0.0) - t.sent_at for t in done]
                deltas += [
                    (t.first_text_at or 0.0) - written[m]
                    for t, m in zip(done, messages, strict=True)
                ]
            return {"total": stats(totals), "per_turn": stats(turns), "first_delta": stats(deltas)}

        await text_turns(args.warmup)  # the browser starts on the first turn
        report = {
            "first_delta": await phase(host, first_delta),
            "tool_overhead": await phase(host, tool_overhead),
            "concurrent": await phase(host, concurrent),
        }
        await subscriber.close()
        return report


async def main(args: argparse.Namespace) -> int:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        host = HostThread(Path(folder) / "data")
        host.start()
        try:
            report = await bench(host, args, Path(folder))
        finally:
            host.stop()
    first = report["first_delta"]
    tools = report["tool_overhead"]
    together = report["concurrent"]
    print(
        f"{'phase':<15}{'n':>5}  {'p50 ms':>8}  {'p95 ms':>8}  {'max ms':>8}  "
        "host loop's worst stall ms (without CPU wait), worst GC pause ms"
    )

    def row(name: str, s: dict[str, float], phase: dict[str, Any] | None = None) -> None:
        stall = ""
        if phase is not None:
            stall = (
                f"{phase['worst_loop_stall_ms']} ({phase['worst_loop_stall_without_cpu_wait_ms']})"
                f", {phase['worst_gc_pause_ms']}"
            )
        print(
            f"{name:<15}{s['n']:>5}  {s['p50_ms']:>8}  {s['p95_ms']:>8}  {s['max_ms']:>8}  {stall}"
        )

    row("first delta", first["first_delta"], first)
    row("tool overhead", tools["overhead"], tools)
    row("  tool itself", tools["tool_own_time"])
    row("20 at once", together["total"], together)
    row("  each turn", together["per_turn"])
    row("  first delta", together["first_delta"])
    load = (round(load_before, 1), round(os.getloadavg()[0], 1))
    print(f"machine load (1 min) before and after: {load[0]}, {load[1]} on {os.cpu_count()} CPUs")
    met = (
        first["first_delta"]["p95_ms"] <= GOAL_FIRST_DELTA_P95_MS
        and tools["overhead"]["p95_ms"] <= GOAL_TOOL_OVERHEAD_P95_MS
        and together["first_delta"]["p95_ms"] <= GOAL_CONCURRENT_DELTA_P95_MS
    )
    print(
        f"goals (first delta p95 <= {GOAL_FIRST_DELTA_P95_MS:g} ms, tool overhead p95 <= "
        f"{GOAL_TOOL_OVERHEAD_P95_MS:g} ms, first delta of 20 turns at once p95 <= "
        f"{GOAL_CONCURRENT_DELTA_P95_MS:g} ms): " + ("met" if met else "MISSED")
    )
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(
        json.dumps(
            {
                "machine": platform.platform(),
                "python": sys.version.split()[0],
                "cpus": os.cpu_count(),
                "load_before_after": load,
                "arguments": vars(args),
                "results": report,
                "goals_met": met,
            },
            indent=2,
        )
    )
    return 0 if met else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="measured text turns")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured text turns first")
    parser.add_argument("--tool-calls", type=int, default=200, help="measured tool calls")
    parser.add_argument("--calls", type=int, default=10, help="list_tabs calls per reply")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of 20 turns at once")
    parser.add_argument("--piece-ms", type=float, default=5.0, help="ms between reply pieces")
    sys.exit(asyncio.run(main(parser.parse_args())))
