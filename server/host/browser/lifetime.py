"""Which loaded tabs go to sleep: the idle rules, kept apart from the browser to test alone."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from server.host.browser.tabs import Tab


def system_memory_low(threshold_bytes: int = 512 * 1024 * 1024) -> bool:
    """True when the kernel reports less available memory than ``threshold_bytes``."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 < threshold_bytes
    except OSError:
        pass
    return False


@dataclass(frozen=True)
class IdlePolicy:
    """Idle limits in seconds and how many idle tabs may stay loaded."""

    idle_unload: float = 15 * 60
    idle_unload_low_memory: float = 5 * 60
    loaded_idle_limit: int = 3
    lru_idle: float = 2 * 60

    def tabs_to_unload(self, tabs: Iterable[Tab], now: float, *, memory_low: bool) -> list[Tab]:
        """Tabs idle past the limit, then the least recently used beyond the loaded-idle limit."""
        # A tab in use (shown, busy, held by a person, waiting on a dialog, in secure entry
        # for a person to settle) never counts.
        idle = [
            t
            for t in tabs
            if t.loaded
            and not t.queue.busy
            and t.viewers == 0
            and t.held_by is None
            and t.dialog is None
            and not t.protection.holds_secret
        ]
        limit = self.idle_unload_low_memory if memory_low else self.idle_unload
        chosen = [t for t in idle if now - t.last_used >= limit]
        rest = sorted((t for t in idle if t not in chosen), key=lambda t: t.last_used, reverse=True)
        chosen += [t for t in rest[self.loaded_idle_limit :] if now - t.last_used >= self.lru_idle]
        return chosen
