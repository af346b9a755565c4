"""The Grafana dashboard in deploy/grafana/ names only metrics a hub and a host serve."""

from __future__ import annotations

import json
import re
from pathlib import Path

from server.host.metrics import HostMetrics
from server.hub.metrics import HubMetrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "crewhost.json"
METRIC_NAME = re.compile(r"\b(?:crewhost|process)_[a-z_]+\b")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def served_names() -> set[str]:
    """Every sample name of the hub's and the host's families, labelled children or not."""
    hub = HubMetrics()
    hub.include(HostMetrics().registry)
    return {
        family.name + suffix
        for family in hub.registry.collect()
        for suffix in SUFFIXES.get(family.type, ("",))
    }


def test_every_metric_the_dashboard_names_is_served() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    expressions = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    named = {name for expr in expressions for name in METRIC_NAME.findall(expr)}
    assert named, "the dashboard names no metric"
    assert named - served_names() == set()


def test_the_dashboard_shows_every_host_family() -> None:
    text = DASHBOARD.read_text(encoding="utf-8")
    host_families = {
        family.name
        for family in HostMetrics().registry.collect()
        if family.name.startswith("crewhost_")
    }
    assert {name for name in host_families if name not in text} == set()
