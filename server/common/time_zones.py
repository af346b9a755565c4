"""The time-zone names a team, a routine or an agent's tab may use: the IANA names this
host knows. ``ZoneInfo`` itself takes more, and fails on some in ways no caller expects:
a folder of zones (``America``) raises ``IsADirectoryError``, and ``localtime`` or
``Factory`` load a zone that depends on the machine or means nothing."""

from __future__ import annotations

import functools
import zoneinfo

_NOT_PORTABLE = frozenset({"localtime", "posixrules", "Factory"})


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) - _NOT_PORTABLE


def is_time_zone(name: str) -> bool:
    """Whether ``name`` is an IANA time zone this host can use (``UTC`` included)."""
    return name in _known()
