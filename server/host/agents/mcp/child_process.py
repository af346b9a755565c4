"""How a stdio MCP server's process is started: an empty environment but the admin's
variables (and ``PATH``), resource limits, no way to gain privileges, and the sandbox
(``sandbox``) when the host keeps one."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from server.host.agents.mcp.sandbox import CommandHidden, StdioSandbox
from server.host.agents.mcp.stdio_egress import PROXY_PORT

# CPU seconds one server process may use in its life (an idle stop starts a new one).
CPU_SECONDS = 3600
# Writable memory (RLIMIT_DATA: the heap and every private writable mapping, counted as it
# is made writable). Not the address space: runtimes reserve far more of it than they use
# (Node.js reserves some 10 GiB for each WebAssembly instance, its fetch among them).
WRITABLE_MEMORY_BYTES = 8 * 1024**3
OPEN_FILES = 256
_PR_SET_NO_NEW_PRIVS = 38


def child_environment(values: dict[str, str]) -> dict[str, str]:
    """The admin's variables and the host's ``PATH`` (unless the admin set one): nothing
    else of the host's environment (its keys, its database address) reaches the server."""
    return {"PATH": os.environ.get("PATH", os.defpath), **values}


def limited_command(
    command: str,
    args: Sequence[str],
    env: dict[str, str],
    sandbox: StdioSandbox | None = None,
    folder: Path | None = None,
    handoff: int | None = None,
) -> list[str]:
    """The command line that runs ``command`` under the limits: a short launcher (this
    Python, isolated, standard library only) sets them and then becomes the command, or
    the sandbox (``bwrap``) that runs it with ``folder`` as its one writable place.

    No host code runs between fork and exec, so the child is started with ``vfork``: the
    host's event loop is not held while a whole copy of the host (its pages, its threads'
    state) is made, which took half a second on a busy machine. A command that is not on
    the server's ``PATH`` is ``FileNotFoundError`` here, in the host, as before, and one
    the sandbox does not show is ``CommandHidden``. A sandbox with the proxied network
    first hands its proxy's socket over ``handoff``, an inherited descriptor."""
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(command)
    line = [command, *args]
    if sandbox is not None:
        assert folder is not None
        if not sandbox.shows(found, folder):
            raise CommandHidden(found)
        inside = [found, *args]
        if sandbox.network == "proxied":
            assert handoff is not None
            inside = sandbox.handoff_command(folder, handoff, PROXY_PORT, inside)
        line = [*sandbox.arguments(folder), "--", *inside]
    limits = (str(CPU_SECONDS), str(WRITABLE_MEMORY_BYTES), str(OPEN_FILES))
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *limits, *line]


# The launcher: lower each limit (to the host's own where that is lower), forbid new
# privileges (a set-user-id program it runs gains nothing), then exec the command.
_LAUNCHER = f"""
import ctypes, os, resource, sys
def lower(which, value):
    hard = resource.getrlimit(which)[1]
    limit = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (limit, limit))
cpu, memory, files = (int(v) for v in sys.argv[1:4])
lower(resource.RLIMIT_CPU, cpu)
lower(resource.RLIMIT_DATA, memory)
lower(resource.RLIMIT_NOFILE, files)
if ctypes.CDLL(None, use_errno=True).prctl({_PR_SET_NO_NEW_PRIVS}, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_NO_NEW_PRIVS) failed")
os.execvp(sys.argv[4], sys.argv[4:])
"""
