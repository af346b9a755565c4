"""Ports for tests that need one nothing listens on."""

from __future__ import annotations

import socket


def closed_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
