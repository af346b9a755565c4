"""Status marks of proxies: what the last page load through each one met.

A main-frame connection error marks a proxy ``unreachable``; a 407 or a refused SOCKS5
sign-in marks it ``signIn``; the next page that loads through it clears the mark. A
mark is the host's memory of recent loads, not a stored fact, so it starts clear.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from server.host.signals import Signals

Mark = Literal["unreachable", "signIn"]


@dataclass(frozen=True, slots=True)
class ProxyStatusChanged:
    """The mark of the team's proxy ``proxy_id`` changed to ``mark`` (None: cleared)."""

    team_id: str
    proxy_id: str
    mark: Mark | None


class ProxyMarks:
    """The marks of every team's proxies; publishes ``ProxyStatusChanged`` when one really
    changes."""

    def __init__(self, signals: Signals | None = None) -> None:
        self._marks: dict[tuple[str, str], Mark] = {}
        self._signals = signals or Signals()

    def get(self, team_id: str, proxy_id: str) -> Mark | None:
        return self._marks.get((team_id, proxy_id))

    def record(self, team_id: str, proxy_id: str, mark: Mark | None) -> None:
        """Sets (or, with None, clears) the proxy's mark."""
        key = (team_id, proxy_id)
        if self._marks.get(key) == mark:
            return
        if mark is None:
            del self._marks[key]
        else:
            self._marks[key] = mark
        self._signals.publish(ProxyStatusChanged(team_id, proxy_id, mark))

    def forget(self, team_id: str, proxy_id: str) -> None:
        """The proxy changed or went: what it met before says nothing now."""
        self._marks.pop((team_id, proxy_id), None)
