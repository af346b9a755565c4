"""How a stdio MCP server's process is started: an empty environment but the admin's
variables (and ``PATH``), resource limits, and no way to gain privileges."""

from __future__ import annotations

import ctypes
import os
import resource

# CPU seconds one server process may use in its life (an idle stop starts a new one).
CPU_SECONDS = 3600
# Address space: enough for a language runtime that reserves much virtual memory.
ADDRESS_SPACE_BYTES = 8 * 1024**3
OPEN_FILES = 256
_PR_SET_NO_NEW_PRIVS = 38
# Looked up once in the host: between fork and exec nothing may take the loader's lock.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl


def child_environment(values: dict[str, str]) -> dict[str, str]:
    """The admin's variables and the host's ``PATH`` (unless the admin set one): nothing
    else of the host's environment (its keys, its database address) reaches the server."""
    return {"PATH": os.environ.get("PATH", os.defpath), **values}


def limit_child() -> None:
    """Run in the child between fork and exec: resource limits, and no new privileges (a
    set-user-id program it runs gains nothing)."""
    _lower(resource.RLIMIT_CPU, CPU_SECONDS)
    _lower(resource.RLIMIT_AS, ADDRESS_SPACE_BYTES)
    _lower(resource.RLIMIT_NOFILE, OPEN_FILES)
    if _PRCTL(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def _lower(which: int, value: int) -> None:
    """Limit ``which`` to ``value``, or to the host's own limit when that is lower."""
    _soft, hard = resource.getrlimit(which)
    limit = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (limit, limit))
