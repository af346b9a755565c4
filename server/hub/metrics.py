"""Prometheus metrics of one hub, in a registry of its own."""

from __future__ import annotations

from typing import Literal, get_args

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

SignInOutcome = Literal["ok", "badPassword", "limited"]
SIGN_IN_OUTCOMES: tuple[SignInOutcome, ...] = get_args(SignInOutcome)


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
            "crewhost_sign_ins",
            "Sign-in attempts by outcome (ok, badPassword, limited).",
            ["outcome"],
            registry=self.registry,
        )
        for outcome in SIGN_IN_OUTCOMES:
            self.sign_ins.labels(outcome)  # listed at 0 before the first attempt

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route).observe(seconds)

    def signed_in(self, outcome: SignInOutcome) -> None:
        """Count one sign-in attempt: signed in, refused (a wrong password or an unknown
        email, alike), or refused by the rate limit before any password was checked."""
        self.sign_ins.labels(outcome).inc()

    def include(self, registry: CollectorRegistry) -> None:
        """Serve ``registry``'s metrics beside the hub's (the built-in host's, in one process)."""
        self.registry.register(registry)

    def render(self) -> bytes:
        return generate_latest(self.registry)
