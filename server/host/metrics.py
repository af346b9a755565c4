"""Prometheus metrics of one host, in a registry of its own.

Counters move where the work happens (a Team API call, a frame, a turn); gauges
are read when ``/metrics`` is scraped, from the places that hold the state (the
peer manager's tables, the tabs, ``/proc``). Labels stay bounded: route names,
error codes, channel kinds, tab states and Chromium process types; never an
account, a tab id or an address.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from server.common import process_tree

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
PROVIDER_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
DROPPED_BUCKETS = (0, 1, 5, 25, 100, 500, 2500)
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")

# Reads sizes of the tables that hold state, as {table: entries}.
TableSizes = Callable[[], Mapping[str, int]]


def channel_kind(label: str) -> str:
    """A data channel's label as a bounded metric label."""
    for kind in ("team-api", "view", "egress"):
        if label == kind or label.startswith(kind + ":"):
            return kind
    return "other"


@dataclass(frozen=True, slots=True)
class ChromiumProcess:
    kind: str  # "browser", or the ``--type=`` of a child (renderer, gpu-process, utility, ...)
    rss_bytes: int


def chromium_processes(root: int | None = None) -> list[ChromiumProcess]:
    """The Chromium processes below ``root`` (this process), with their resident memory."""
    root = os.getpid() if root is None else root
    found: list[ChromiumProcess] = []
    for pid in process_tree.descendants(root, process_tree.children_by_parent()):
        try:
            # Chromium's children rewrite their command line as one space-separated string.
            folder = process_tree.PROC / str(pid)
            argv = (folder / "cmdline").read_bytes().replace(b"\0", b" ").split()
            resident = int((folder / "statm").read_text().split()[1]) * PAGE_SIZE
        except (OSError, IndexError, ValueError):
            continue
        if not argv or "chrom" not in Path(argv[0].decode(errors="replace")).name:
            continue
        kind = "browser"
        for arg in argv[1:]:
            if arg.startswith(b"--type="):
                kind = arg[len(b"--type=") :].decode(errors="replace")[:32]
        found.append(ChromiumProcess(kind, resident))
    return found


class FrameCounts:
    """Where live-view viewers count their frames."""

    def __init__(self, frames: Counter, dropped_per_view: Histogram) -> None:
        self._sent = frames.labels("sent")
        self._dropped = frames.labels("dropped")
        self._per_view = dropped_per_view

    def sent(self) -> None:
        self._sent.inc()

    def dropped(self) -> None:
        self._dropped.inc()

    def view_closed(self, dropped: int) -> None:
        self._per_view.observe(dropped)


# What ``_ScrapeTime`` yields, by name (``describe`` names them before any scrape).
_SCRAPE_TIME_FAMILIES = {
    "crewhost_host_table_entries": (
        "Entries in the host's tables of live state (peers, channels, views, ...)."
    ),
    "crewhost_peers_connected": "Peer connections open now.",
    "crewhost_tabs": "Tabs by state.",
    "crewhost_chromium_processes": "Chromium processes by type.",
    "crewhost_chromium_resident_bytes": (
        "Resident memory of the Chromium processes (from /proc), by type."
    ),
    "crewhost_turns_waiting": "Turns waiting for one of their team's places.",
    "crewhost_process_threads": "Threads of this process.",
    "crewhost_asyncio_tasks": "Tasks of the host's event loop.",
}


def _family(name: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, _SCRAPE_TIME_FAMILIES[name], labels=labels)


class _ScrapeTime(Collector):
    """Gauges read at scrape time from the host's state."""

    def __init__(self, metrics: HostMetrics) -> None:
        self._metrics = metrics

    def describe(self) -> Iterable[Metric]:
        """The families without their values: registering reads this, not ``collect``,
        which walks every process of the machine (long on a busy one, and on the loop)."""
        for name in _SCRAPE_TIME_FAMILIES:
            yield _family(name)

    def collect(self) -> Iterable[Metric]:
        metrics = self._metrics
        tables = _family("crewhost_host_table_entries", labels=["table"])
        for source in metrics.table_sources:
            for table, size in source().items():
                tables.add_metric([table], size)
        yield tables
        peers = _family("crewhost_peers_connected")
        peers.add_metric([], metrics.peer_count())
        yield peers
        tabs = _family("crewhost_tabs", labels=["state"])
        for state, count in metrics.tab_states().items():
            tabs.add_metric([state], count)
        yield tabs
        yield from self._chromium()
        waiting = _family("crewhost_turns_waiting")
        waiting.add_metric([], metrics.turns_waiting())
        yield waiting
        threads = _family("crewhost_process_threads")
        threads.add_metric([], threading.active_count())
        yield threads
        tasks = _family("crewhost_asyncio_tasks")
        tasks.add_metric([], _task_count())
        yield tasks

    def _chromium(self) -> Iterator[Metric]:
        count = _family("crewhost_chromium_processes", labels=["type"])
        memory = _family("crewhost_chromium_resident_bytes", labels=["type"])
        by_kind: dict[str, list[int]] = {}
        for process in chromium_processes():
            by_kind.setdefault(process.kind, []).append(process.rss_bytes)
        for kind, sizes in sorted(by_kind.items()):
            count.add_metric([kind], len(sizes))
            memory.add_metric([kind], sum(sizes))
        yield count
        yield memory


def _task_count() -> int:
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:  # scraped off the loop (a test's thread)
        return 0


class HostMetrics:
    """Counters, histograms and scrape-time gauges of one host."""

    def __init__(self, tab_states: Callable[[], Mapping[str, int]] = dict) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        self.table_sources: list[TableSizes] = []
        self.peer_count: Callable[[], int] = lambda: 0
        self.turns_waiting: Callable[[], int] = lambda: 0
        self.tab_states = tab_states
        self.channel_bytes = Counter(
            "crewhost_data_channel_bytes",
            "Data-channel message bytes, by direction (in, out) and channel kind.",
            ["direction", "kind"],
            registry=self.registry,
        )
        self.team_api_calls = Counter(
            "crewhost_team_api_calls",
            "Team API calls answered, by route and status (ok or the error code).",
            ["route", "status"],
            registry=self.registry,
        )
        self.team_api_seconds = Histogram(
            "crewhost_team_api_call_seconds",
            "Time to answer a Team API call, by route.",
            ["route"],
            registry=self.registry,
            buckets=LATENCY_BUCKETS,
        )
        self.frames = Counter(
            "crewhost_live_view_frames",
            "Live-view frames by outcome: sent to a viewer, or dropped for a newer one.",
            ["outcome"],
            registry=self.registry,
        )
        self.dropped_per_view = Histogram(
            "crewhost_live_view_dropped_frames_per_view",
            "Frames one view dropped over its life, observed when it closes.",
            registry=self.registry,
            buckets=DROPPED_BUCKETS,
        )
        self.turns = Counter(
            "crewhost_turns", "Agent turns ended, by status.", ["status"], registry=self.registry
        )
        self.turns_waited = Counter(
            "crewhost_turns_waited",
            "Agent turns that waited for one of their team's places (host.team_running_turns).",
            registry=self.registry,
        )
        # By provider and model only: a team or member label would grow without bound.
        self.model_tokens = Counter(
            "crewhost_model_tokens",
            "Tokens of model requests, by provider, model and kind (input, output, "
            "cache_read, cache_write, reasoning).",
            ["provider", "model", "kind"],
            registry=self.registry,
        )
        self.model_cost = Counter(
            "crewhost_model_cost_usd",
            "Cost of priced model requests in US dollars, by provider and model.",
            ["provider", "model"],
            registry=self.registry,
        )
        self.provider_seconds = Histogram(
            "crewhost_provider_request_seconds",
            "Time of one model-provider request, to its last event, by outcome (ok, failed).",
            ["outcome"],
            registry=self.registry,
            buckets=PROVIDER_BUCKETS,
        )
        self.frame_counts = FrameCounts(self.frames, self.dropped_per_view)
        self.registry.register(_ScrapeTime(self))

    def registry_text(self) -> bytes:
        """The metrics in Prometheus' text format."""
        return generate_latest(self.registry)

    def team_api_answered(self, route: str, status: str, seconds: float) -> None:
        self.team_api_calls.labels(route, status).inc()
        self.team_api_seconds.labels(route).observe(seconds)

    def count_channel(self, channel: Any) -> None:
        """Count the bytes of every message ``channel`` receives and sends from now on."""
        kind = channel_kind(str(channel.label))
        received = self.channel_bytes.labels("in", kind)
        sent = self.channel_bytes.labels("out", kind)
        channel.on("message", lambda data: received.inc(_size(data)))
        send = channel.send

        def counted_send(data: bytes | str) -> None:
            send(data)
            sent.inc(_size(data))

        # aiortc has no per-channel byte counters; this one channel's send is wrapped.
        channel.send = counted_send


def _size(data: bytes | str) -> int:
    return len(data) if isinstance(data, bytes) else len(data.encode())
