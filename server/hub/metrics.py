"""Prometheus metrics of one hub, in a registry of its own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest


class HubMetrics:
    """Counters and latency histograms for the HTTP API."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "crewhost_http_requests",
            "HTTP requests answered, by route, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "crewhost_http_request_seconds",
            "Time to answer an HTTP request, by route.",
            ["route"],
            registry=self.registry,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
        )
        self.sign_ins = Counter(
            "crewhost_sign_ins", "Sign-in attempts by outcome.", ["outcome"], registry=self.registry
        )

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def include(self, registry: CollectorRegistry) -> None:
        """Serve ``registry``'s metrics beside the hub's (the built-in host's, in one process)."""
        self.registry.register(registry)

    def render(self) -> bytes:
        return generate_latest(self.registry)
