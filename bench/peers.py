"""WebRTC benchmark of a real host: connection set-up, and Team API round trips with 50 peers.

Run from the repository root with the project venv::

    .venv/bin/python bench/peers.py --seconds 10

It starts ``crewhost serve`` as a separate process on a free loopback port with a
fresh data folder; that one process holds the hub and its built-in host (one event
loop), the host linked to its hub over a loopback websocket. The first owner signs
up with the setup code the server prints, invites ``--accounts`` members, and each
member signs in as a peer (``HubClient.sign_in``). This process is the client: every
peer is an aiortc ``RTCPeerConnection`` in it, spread round-robin over the members.

* ``connect``: ``--connections`` (50) connections made one after another, so each
  measures set-up latency rather than contention. The steps of ``connect_to_host``
  are repeated here with a timestamp after each (same helpers, same checks):
  (a) *ticket -> open*, from just before the ticket request to the open
  ``team-api`` channel, the measure of the goal; the offer must exist before, as the
  ticket names its DTLS fingerprint; (b) *total*, from a new ``RTCPeerConnection``,
  so including the offer and its ICE gathering. Every connection stays open.
* ``round trip``: ``capabilities`` called in a loop, one call in flight per peer,
  for ``--seconds``: first by one peer alone (the baseline), then by all 50 peers at
  once; calls/s, p50 and p99 of every call, the CPU the server process and this
  client process used meanwhile (``/proc/<pid>/stat``; both share the machine), that
  CPU per call, and the UDP datagrams per call (the peers' DTLS statistics).

``--sctp-bundling off`` runs both ends with aiortc's SCTP as it comes (one packet per
chunk, a SACK for every packet), for a before/after comparison with the default ``on``
(``server/common/sctp_bundling.py``). ``--client-loop uvloop`` runs this client on
uvloop (the server already runs on it when installed), so it takes less of the machine.

The Team API rate limit (each member's, across their peers) is raised through
``CREWHOST_RTC_TEAM_API_RATE`` and ``CREWHOST_RTC_TEAM_API_BURST`` so that peers calling
in a loop are not refused; the in-flight limit stays at its default (each peer has one
call in flight).
Results are printed and written to ``bench/results/peers.json``.

Goals on loopback: connection set-up (ticket -> open) p95 <= 300 ms; ``capabilities``
round trip p99 <= 10 ms with 50 peers connected to one host, each calling in a loop.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from importlib.metadata import version
from pathlib import Path
from typing import Any

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from harness import (
    PASSWORD,
    Server,
    create_accounts,
    member_email,
    percentile,
    read_setup_code,
    start_server,
    stop_server,
    wait_healthy,
)

from peer.connection import (
    HostConnection,
    HostSignatureInvalid,
    TeamApiCallError,
    ticket_nonce,
)
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts
from server.common.keys import verify_signature
from server.common.protocol.signaling import answer_proof
from server.common.protocol.team_api import TEAM_API_LABEL
from server.common.sctp_bundling import bundle_sctp
from server.common.sdp import sdp_fingerprint
from server.event_loop import run as run_loop

CONNECTIONS = 50
ROUTE = "capabilities"
GOAL_SETUP_P95_MS = 300.0
GOAL_ROUND_TRIP_P99_MS = 10.0
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "peers.json"
OPEN_WAIT_SECONDS = 20.0
HOST_ONLINE_SECONDS = 30.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Only the Team API rate changes (a member's, across their peers): a peer calling in a
# loop far exceeds 50/s.
TEAM_API_OVERRIDES = {
    "CREWHOST_RTC_TEAM_API_RATE": "100000",
    "CREWHOST_RTC_TEAM_API_BURST": "100000",
}


# --- the peers --------------------------------------------------------------------------


@dataclass
class Member:
    """A member signed in as a peer, and the team it connects in."""

    hub: HubClient
    account_id: str
    team_id: str
    known_hosts: KnownHosts


async def sign_in(base: str, email: str, folder: Path) -> Member:
    hub = HubClient(base)
    try:
        account = await hub.sign_in(email, PASSWORD)
        team_id = str((await hub.teams())[0]["id"])
    except BaseException:
        await hub.close()
        raise
    known_hosts = KnownHosts(folder / f"{account['id']}-known-hosts.json")
    return Member(hub, str(account["id"]), team_id, known_hosts)


async def builtin_host_id(member: Member) -> str:
    """The built-in host's id, once its link to the hub is up."""
    deadline = time.monotonic() + HOST_ONLINE_SECONDS
    while time.monotonic() < deadline:
        for host in await member.hub.hosts(member.team_id):
            if host["builtin"] and host["online"]:
                return str(host["id"])
        await asyncio.sleep(0.1)
    raise RuntimeError("the built-in host did not link to its hub")


@dataclass(frozen=True)
class SetupTiming:
    """Seconds each step of one connection took."""

    offer: float  # a new RTCPeerConnection, its channel, the offer (ICE gathering)
    ticket: float  # POST .../tickets
    answer: float  # POST .../connect: relayed to the host, answered and signed there
    verify: float  # pin the host key, check the signature, set the remote description
    ice_dtls: float  # until the connection state is "connected"
    channel: float  # SCTP association and the channel open

    def from_ticket(self) -> float:
        return self.ticket + self.answer + self.verify + self.ice_dtls + self.channel

    def total(self) -> float:
        return self.offer + self.from_ticket()


STEPS = [step.name for step in fields(SetupTiming)]


async def timed_connect(
    member: Member, host_id: str, sctp_bundling: bool
) -> tuple[HostConnection, SetupTiming]:
    """The steps of ``peer.connection.connect_to_host``, with a timestamp after each."""
    started = time.perf_counter()
    marks: dict[str, float] = {}
    connection = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    if sctp_bundling:
        bundle_sctp(connection)
    try:
        channel = connection.createDataChannel(TEAM_API_LABEL, ordered=True)
        opened = asyncio.Event()

        def on_open() -> None:
            marks["open"] = time.perf_counter()
            opened.set()

        def on_state() -> None:
            if connection.connectionState == "connected":
                marks.setdefault("connected", time.perf_counter())

        channel.on("open", on_open)
        connection.on("connectionstatechange", on_state)
        await connection.setLocalDescription(await connection.createOffer())
        offer = connection.localDescription.sdp
        ticket_at = time.perf_counter()
        grant = await member.hub.ticket(member.team_id, host_id, sdp_fingerprint(offer))
        answer_at = time.perf_counter()
        answer = await member.hub.connect(member.team_id, host_id, grant.ticket, offer)
        verify_at = time.perf_counter()
        member.known_hosts.check(member.account_id, host_id, answer.host_key)
        proof = answer_proof(sdp_fingerprint(answer.sdp), ticket_nonce(grant.ticket))
        if not verify_signature(answer.host_key, proof, answer.signature):
            raise HostSignatureInvalid("the host's answer does not carry the host's signature")
        await connection.setRemoteDescription(RTCSessionDescription(sdp=answer.sdp, type="answer"))
        remote_at = time.perf_counter()
        host = HostConnection(connection, channel, host_id)
        await asyncio.wait_for(opened.wait(), OPEN_WAIT_SECONDS)
    except BaseException:
        with contextlib.suppress(Exception):
            await connection.close()
        raise
    opened_at = marks["open"]
    connected_at = min(marks.get("connected", opened_at), opened_at)
    return host, SetupTiming(
        offer=ticket_at - started,
        ticket=answer_at - ticket_at,
        answer=verify_at - answer_at,
        verify=remote_at - verify_at,
        ice_dtls=connected_at - remote_at,
        channel=opened_at - connected_at,
    )


async def close_all(hosts: Sequence[HostConnection]) -> None:
    await asyncio.gather(*(host.close() for host in hosts), return_exceptions=True)


# --- CPU of a process -------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of every thread of ``pid`` so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name may hold spaces; fields after it start with the state (field 3).
    after_name = stat.rpartition(")")[2].split()
    return (int(after_name[11]) + int(after_name[12])) / CLOCK_TICKS


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine spent busy (not idle, not waiting on I/O)."""
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle, iowait = ticks[3], ticks[4]
    # guest time is already counted in user time.
    return (sum(ticks[:8]) - idle - iowait) / CLOCK_TICKS


@dataclass(frozen=True)
class CpuUse:
    """Percent of one core used by the server, this client and all other processes."""

    server: float
    client: float
    others: float


@dataclass
class CpuWindow:
    """CPU used by the server, this client and everything else from ``start`` to ``stop``."""

    server_pid: int
    started: float = 0.0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    machine_cpu: float = 0.0

    def start(self) -> None:
        self.started = time.perf_counter()
        self.server_cpu = cpu_seconds(self.server_pid)
        self.client_cpu = cpu_seconds(os.getpid())
        self.machine_cpu = machine_busy_seconds()

    def stop(self) -> CpuUse:
        elapsed = time.perf_counter() - self.started
        server = cpu_seconds(self.server_pid) - self.server_cpu
        client = cpu_seconds(os.getpid()) - self.client_cpu
        others = max(0.0, machine_busy_seconds() - self.machine_cpu - server - client)
        return CpuUse(
            server=round(100 * server / elapsed, 1),
            client=round(100 * client / elapsed, 1),
            others=round(100 * others / elapsed, 1),
        )


# --- phase 1: connect -------------------------------------------------------------------


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


@dataclass
class ConnectResult:
    connections: int
    from_ticket_p50_ms: float
    from_ticket_p95_ms: float
    from_ticket_max_ms: float
    total_p50_ms: float
    total_p95_ms: float
    total_max_ms: float
    step_p50_ms: dict[str, float]
    step_p95_ms: dict[str, float]
    cpu_percent: CpuUse
    per_connection_ms: list[dict[str, float]]


def summarise_connects(timings: Sequence[SetupTiming], cpu: CpuUse) -> ConnectResult:
    from_ticket = sorted(t.from_ticket() for t in timings)
    total = sorted(t.total() for t in timings)
    steps = {name: sorted(getattr(t, name) for t in timings) for name in STEPS}
    return ConnectResult(
        connections=len(timings),
        from_ticket_p50_ms=ms(percentile(from_ticket, 0.50)),
        from_ticket_p95_ms=ms(percentile(from_ticket, 0.95)),
        from_ticket_max_ms=ms(from_ticket[-1]),
        total_p50_ms=ms(percentile(total, 0.50)),
        total_p95_ms=ms(percentile(total, 0.95)),
        total_max_ms=ms(total[-1]),
        step_p50_ms={name: ms(percentile(values, 0.50)) for name, values in steps.items()},
        step_p95_ms={name: ms(percentile(values, 0.95)) for name, values in steps.items()},
        cpu_percent=cpu,
        per_connection_ms=[{name: ms(value) for name, value in asdict(t).items()} for t in timings],
    )


async def connect_phase(
    members: Sequence[Member],
    host_id: str,
    count: int,
    hosts: list[HostConnection],
    cpu: CpuWindow,
    sctp_bundling: bool,
) -> ConnectResult:
    """``count`` connections one after another; each is appended to ``hosts`` once open."""
    timings = []
    cpu.start()
    for index in range(count):
        member = members[index % len(members)]
        host, timing = await timed_connect(member, host_id, sctp_bundling)
        hosts.append(host)
        timings.append(timing)
    return summarise_connects(timings, cpu.stop())


# --- phase 2: round trips ---------------------------------------------------------------


@dataclass
class RoundTripResult:
    name: str
    peers: int
    calls: int
    errors: dict[str, int]
    calls_per_second: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    cpu_percent: CpuUse
    # CPU microseconds per call: less swayed than latency by what else the machine runs.
    server_cpu_us_per_call: float
    client_cpu_us_per_call: float
    # UDP datagrams the peers sent and received per call (DTLS transport statistics).
    datagrams_per_call: float


def cpu_us_per_call(percent: float, calls_per_second: float) -> float:
    return round(percent * 10_000 / calls_per_second, 1) if calls_per_second else 0.0


async def call_loop(
    host: HostConnection, deadline: float, rate: float = 0.0, phase: float = 0.0
) -> tuple[list[float], Counter[str]]:
    """Call ``ROUTE`` until ``deadline``, one call at a time; every call's latency.

    ``rate`` 0: back to back. Otherwise ``rate`` calls a second, the first after ``phase``
    of a period, each latency counted from when the call was due (a call held back by a
    slow one before it counts its wait).
    """
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    period = 1.0 / rate if rate > 0 else 0.0
    due = time.perf_counter() + phase * period
    while (due if period else time.perf_counter()) < deadline:
        if period:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
        else:
            due = time.perf_counter()
        try:
            await host.call(ROUTE)
        except TeamApiCallError as exc:
            errors[exc.code] += 1
        except TimeoutError:
            errors["timeout"] += 1
        except ConnectionError:
            errors["connectionClosed"] += 1
            break
        latencies.append(time.perf_counter() - due)
        due += period
    return latencies, errors


def datagrams(hosts: Sequence[HostConnection]) -> int:
    """Datagrams the peers' DTLS transports sent and received so far."""
    total = 0
    for host in hosts:
        sctp = host.connection.sctp
        if sctp is None:
            continue
        # getStats() reports RTP only; the DTLS transport under SCTP keeps its own counts.
        for stats in sctp.transport._get_stats().values():
            total += stats.packetsSent + stats.packetsReceived
    return total


async def round_trip_phase(
    name: str, hosts: Sequence[HostConnection], seconds: float, cpu: CpuWindow
) -> RoundTripResult:
    # One untimed call per peer first, so no first-call cost lands in the window.
    await asyncio.gather(*(host.call(ROUTE) for host in hosts))
    datagrams_before = datagrams(hosts)
    cpu.start()
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(call_loop(host, started + seconds) for host in hosts))
    elapsed = time.perf_counter() - started
    cpu_use = cpu.stop()
    datagrams_during = datagrams(hosts) - datagrams_before
    latencies = sorted(latency for per_peer, _ in outcomes for latency in per_peer)
    errors: Counter[str] = Counter()
    for _, per_peer in outcomes:
        errors.update(per_peer)
    rate = len(latencies) / elapsed
    return RoundTripResult(
        name=name,
        peers=len(hosts),
        calls=len(latencies),
        errors=dict(errors),
        calls_per_second=round(rate, 1),
        p50_ms=ms(percentile(latencies, 0.50)),
        p99_ms=ms(percentile(latencies, 0.99)),
        max_ms=ms(latencies[-1]) if latencies else 0.0,
        cpu_percent=cpu_use,
        server_cpu_us_per_call=cpu_us_per_call(cpu_use.server, rate),
        client_cpu_us_per_call=cpu_us_per_call(cpu_use.client, rate),
        datagrams_per_call=round(datagrams_during / len(latencies), 2) if latencies else 0.0,
    )


# --- the run ----------------------------------------------------------------------------


@dataclass
class Report:
    setup: dict[str, Any]
    connect: ConnectResult
    round_trips: list[RoundTripResult]


def server_env(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TEAM_API_OVERRIDES)
    env["CREWHOST_RTC_SCTP_BUNDLING"] = "true" if args.sctp_bundling == "on" else "false"
    return env


async def sign_in_members(server: Server, accounts: int, folder: Path) -> list[Member]:
    """Sign up an owner and ``accounts`` members, then sign each member in as a peer."""
    await wait_healthy(server)
    await create_accounts(server.base, await read_setup_code(server), accounts + 1)
    members = []
    try:
        for index in range(1, accounts + 1):
            members.append(await sign_in(server.base, member_email(index), folder))
    except BaseException:
        await asyncio.gather(*(member.hub.close() for member in members))
        raise
    return members


async def measure(
    server: Server, args: argparse.Namespace, folder: Path
) -> tuple[ConnectResult, list[RoundTripResult]]:
    members = await sign_in_members(server, args.accounts, folder)
    hosts: list[HostConnection] = []
    cpu = CpuWindow(server.process.pid)
    try:
        host_id = await builtin_host_id(members[0])
        print(f"server {server.base} ready; host {host_id} linked", flush=True)
        connect = await connect_phase(
            members, host_id, args.connections, hosts, cpu, args.sctp_bundling == "on"
        )
        print(f"{len(hosts)} connections open", flush=True)
        baseline = await round_trip_phase("baseline", hosts[:1], args.seconds, cpu)
        loaded = await round_trip_phase("loaded", hosts, args.seconds, cpu)
    finally:
        await close_all(hosts)
        await asyncio.gather(*(member.hub.close() for member in members))
    return connect, [baseline, loaded]


def describe_setup(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "aiortc": version("aiortc"),
        "aioice": version("aioice"),
        "server": "crewhost serve (hub and built-in host in one process, one event loop)",
        "route": ROUTE,
        "connections": args.connections,
        "accounts": args.accounts,
        "seconds_per_round_trip_phase": args.seconds,
        "team_api_overrides": TEAM_API_OVERRIDES,
        "sctp_bundling": args.sctp_bundling,
        "client_loop": args.client_loop,
        "load_average_before": [round(load, 2) for load in os.getloadavg()],
    }


def run_benchmark(args: argparse.Namespace, folder: Path) -> Report:
    setup = describe_setup(args)
    data_dir, peers_dir = folder / "server", folder / "peers"
    data_dir.mkdir()
    server = start_server(data_dir, server_env(args))
    try:
        connect, round_trips = run_loop(measure(server, args, peers_dir), args.client_loop)
    finally:
        stop_server(server)
    setup["load_average_after"] = [round(load, 2) for load in os.getloadavg()]
    return Report(setup, connect, round_trips)


# --- report -----------------------------------------------------------------------------


def goals(report: Report) -> dict[str, dict[str, Any]]:
    loaded = report.round_trips[-1]
    return {
        "connection_setup": {
            "measure": "ticket -> open, p95",
            "goal_ms": GOAL_SETUP_P95_MS,
            "measured_ms": report.connect.from_ticket_p95_ms,
            "met": report.connect.from_ticket_p95_ms <= GOAL_SETUP_P95_MS,
        },
        "round_trip": {
            "measure": f"{ROUTE} p99 with {loaded.peers} peers, no errors",
            "goal_ms": GOAL_ROUND_TRIP_P99_MS,
            "measured_ms": loaded.p99_ms,
            "met": loaded.p99_ms <= GOAL_ROUND_TRIP_P99_MS and not loaded.errors,
        },
    }


def print_overrides() -> None:
    print("Team API rate limits RAISED for this benchmark (not production values):")
    for name, value in TEAM_API_OVERRIDES.items():
        print(f"    {name}={value}")
    print(flush=True)


def print_connect(result: ConnectResult) -> None:
    print(f"\nconnect: {result.connections} connections, one after another")
    print(f"{'measure':<24} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    print(
        f"{'ticket -> open (goal)':<24} {result.from_ticket_p50_ms:>8.1f} "
        f"{result.from_ticket_p95_ms:>8.1f} {result.from_ticket_max_ms:>8.1f}"
    )
    print(
        f"{'total (offer -> open)':<24} {result.total_p50_ms:>8.1f} "
        f"{result.total_p95_ms:>8.1f} {result.total_max_ms:>8.1f}"
    )
    for name in STEPS:
        print(
            f"{'  step ' + name:<24} {result.step_p50_ms[name]:>8.1f} "
            f"{result.step_p95_ms[name]:>8.1f}"
        )
    cpu = result.cpu_percent
    print(
        f"CPU meanwhile, percent of one core: server {cpu.server}%, client {cpu.client}%, "
        f"other processes {cpu.others}%"
    )


def print_round_trips(results: Sequence[RoundTripResult]) -> None:
    print(f"\nround trip: {ROUTE}, one call in flight per peer")
    print(
        f"{'phase':<9} {'peers':>5} {'calls':>8} {'errors':>6} {'calls/s':>8} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'CPU server':>10} {'client':>7} {'others':>7}"
    )
    for r in results:
        print(
            f"{r.name:<9} {r.peers:>5} {r.calls:>8} {sum(r.errors.values()):>6} "
            f"{r.calls_per_second:>8.1f} {r.p50_ms:>7.2f} {r.p99_ms:>7.2f} {r.max_ms:>7.2f} "
            f"{r.cpu_percent.server:>9.1f}% {r.cpu_percent.client:>6.1f}% "
            f"{r.cpu_percent.others:>6.1f}%"
        )
    for r in results:
        if r.errors:
            print(f"errors in {r.name}: {r.errors}")
    print(
        "(CPU in percent of one core, 200% being the whole machine; the server process "
        "holds both hub and host; others: every other process on the machine)"
    )
    for r in results:
        print(
            f"per call, {r.name}: CPU server {r.server_cpu_us_per_call:.0f} us, "
            f"client {r.client_cpu_us_per_call:.0f} us; "
            f"{r.datagrams_per_call:.2f} datagrams (both ways)"
        )


def print_report(report: Report) -> None:
    setup = report.setup
    print(
        f"\nmachine: {setup['cores']} cores, Python {setup['python']}, "
        f"aiortc {setup['aiortc']}, aioice {setup['aioice']}"
    )
    print(f"server: {setup['server']}; {setup['accounts']} member account(s)")
    print(
        f"SCTP bundling (both ends): {setup['sctp_bundling']}; "
        f"client event loop: {setup['client_loop']} (the server's: auto, uvloop when installed)"
    )
    print(
        f"load average (1, 5, 15 min): before {setup['load_average_before']}, "
        f"after {setup['load_average_after']}"
    )
    print_connect(report.connect)
    print_round_trips(report.round_trips)
    print()
    for goal in goals(report).values():
        verdict = "MET" if goal["met"] else "NOT MET"
        print(
            f"goal {goal['measure']} <= {goal['goal_ms']:.0f} ms: "
            f"{goal['measured_ms']:.1f} ms, {verdict}"
        )


def write_results(report: Report) -> None:
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "setup": report.setup,
        "goals": goals(report),
        "connect": asdict(report.connect),
        "round_trips": [asdict(result) for result in report.round_trips],
    }
    RESULTS_FILE.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results written to {RESULTS_FILE}")


# --- main -------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="length of each round-trip phase"
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=CONNECTIONS,
        help="peers connected one after another, then calling at once",
    )
    parser.add_argument(
        "--accounts", type=int, default=1, help="member accounts the peers are spread over"
    )
    parser.add_argument(
        "--sctp-bundling",
        choices=["on", "off"],
        default="on",
        help="delayed SACKs and shared packets on both ends (rtc.sctp_bundling); "
        "off: aiortc's one packet per chunk, for a before/after comparison",
    )
    parser.add_argument(
        "--client-loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="event loop of this client process, which shares the machine with the server",
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.connections < 1 or args.accounts < 1:
        parser.error("--connections and --accounts must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print_overrides()
    with tempfile.TemporaryDirectory(prefix="crewhost-bench-") as folder:
        report = run_benchmark(args, Path(folder))
    print_report(report)
    write_results(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
