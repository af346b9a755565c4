"""Status marks of proxies: what the last page load through each one met.

A main-frame connection error marks a proxy ``unreachable``; a 407 or a refused SOCKS5
sign-in marks it ``signIn``; the next page that loads through it clears the mark. A
mark is the host's memory of recent loads, not a stored fact, so it starts clear.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Mark = Literal["unreachable", "signIn"]


class ProxyMarks:
    """The marks of every team's proxies; ``changed(team_id)`` runs when one really changes."""

    def __init__(self) -> None:
        self._marks: dict[tuple[str, str], Mark] = {}
        self.changed: Callable[[str], None] = lambda _team_id: None

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
        self.changed(team_id)

    def forget(self, team_id: str, proxy_id: str) -> None:
        """The proxy changed or went: what it met before says nothing now."""
        self._marks.pop((team_id, proxy_id), None)
