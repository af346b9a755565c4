"""The sandbox a stdio MCP server runs in: bubblewrap (``bwrap``), namespaces of its own.

Inside, the server sees the system's programs and libraries (``/usr`` and the top-level
links into it) and the few files of ``/etc`` a program needs to resolve names and check
certificates, all read-only; the folders the host's operator lists
(``host.mcp_stdio_paths``, a runtime installed under ``/opt`` or a virtualenv), read-only
too; its own folder, read-write, as its home and working folder; a ``/tmp`` of its own,
and a ``/proc`` that shows its own processes alone. Nothing else of the machine is there:
not the host's data folder, not another team's files, not the host's configuration. It
runs as ``nobody`` of a user namespace of its own, so it holds no capability on the
machine.

Its network (``host.mcp_stdio_network``) is a namespace of its own with nothing but its
own loopback, unless the operator gives it the host's. ``none`` leaves it so. ``proxied``
adds one way out: before the server's command starts, the sandbox's Python opens a
listening socket on that loopback and hands it to the host over a socket pair, then
becomes the command (``handoff_command``); the host serves the socket as an HTTP proxy
that reaches public addresses only (``stdio_egress``), and shows the sandbox the preload
that makes an older Node.js use it. ``host`` shares the host's own network, its
loopback's services included.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from server.host.agents.mcp.stdio_egress import NODE_PRELOAD, NODE_PRELOAD_IN_SANDBOX

# What of the machine every server sees, read-only, where it exists (the top-level links
# of a merged /usr are bound as the folders they point at).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
    "timezone",
)
# The user and group the server runs as inside its user namespace.
NOBODY = 65534
# The Pythons that may run the handoff, the first the sandbox shows.
HANDOFF_PYTHONS = ("/usr/bin/python3", "/bin/python3")
# How long the first check of the sandbox may take.
CHECK_SECONDS = 10.0
_INSTALL = "install Debian's bubblewrap package or turn host.mcp_stdio_sandbox off"


NetworkMode = Literal["none", "proxied", "host"]

# Run by the sandbox's Python, isolated, standard library only: open the proxy's listening
# socket on the sandbox's own loopback, hand it to the host over the inherited socket
# (argv 1, its descriptor; argv 2, the port), keep no copy, then become the command.
HANDOFF = """
import os, socket, sys
channel = socket.socket(fileno=int(sys.argv[1]))
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", int(sys.argv[2])))
listener.listen(64)
socket.send_fds(channel, [b"L"], [listener.fileno()])
listener.close()
channel.close()
os.execv(sys.argv[3], sys.argv[3:])
"""


class SandboxUnavailable(Exception):
    """The sandbox cannot run a server on this machine; the message says why, for a
    person, and names the setting."""


class CommandHidden(FileNotFoundError):
    """The server's command is outside what the sandbox shows."""


@dataclass(eq=False)
class StdioSandbox:
    """How the host's stdio servers are confined (``host.mcp_stdio_sandbox``)."""

    paths: tuple[Path, ...] = ()
    network: NetworkMode = "proxied"
    bwrap: str | None = field(default_factory=lambda: shutil.which("bwrap"))
    _works: bool = field(default=False, repr=False)

    @classmethod
    def from_settings(cls, paths: Iterable[str], *, network: NetworkMode) -> StdioSandbox:
        return cls(tuple(Path(path) for path in paths), network)

    def _roots(self, folder: Path) -> list[Path]:
        roots = [Path(path).resolve() for path in SYSTEM_PATHS if Path(path).exists()]
        roots += [path.resolve() for path in self.paths]
        return [*roots, folder.resolve()]

    def shows(self, command: str, folder: Path) -> bool:
        """Whether ``command`` (a path the host found), and what it links to, are inside
        what the sandbox of a server in ``folder`` shows."""
        roots = self._roots(folder)
        given = Path(command).absolute()
        return all(
            any(path == root or root in path.parents for root in roots)
            for path in (given, given.resolve())
        )

    def arguments(self, folder: Path) -> list[str]:
        """``bwrap`` and its options for a server whose folder is ``folder``; the command
        and its arguments follow after ``--``."""
        if self.bwrap is None:
            raise SandboxUnavailable(f"the stdio sandbox needs the bwrap command: {_INSTALL}")
        line = [
            self.bwrap,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            *(() if self.network == "host" else ("--unshare-net",)),
            "--uid",
            str(NOBODY),
            "--gid",
            str(NOBODY),
            "--hostname",
            "mcp",
            "--die-with-parent",
        ]
        # bwrap mounts in the order given: /tmp first, a folder of its own in memory, so
        # that a folder shown below it (the server's own, a listed one) is mounted on top.
        line += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]  # noqa: S108
        for path in SYSTEM_PATHS:
            line += ["--ro-bind-try", path, path]
        for entry in ETC_ENTRIES:
            line += ["--ro-bind-try", f"/etc/{entry}", f"/etc/{entry}"]
        for shown in self.paths:
            line += ["--ro-bind", str(shown), str(shown)]
        if self.network == "proxied":
            line += ["--ro-bind", str(NODE_PRELOAD), NODE_PRELOAD_IN_SANDBOX]
        place = str(folder)
        line += ["--bind", place, place, "--chdir", place]
        return line

    def handoff_python(self, folder: Path) -> str:
        """The Python that hands the proxy's socket over: the first of ``HANDOFF_PYTHONS``
        the sandbox shows, else ``SandboxUnavailable``."""
        for python in HANDOFF_PYTHONS:
            if Path(python).exists() and self.shows(python, folder):
                return python
        raise SandboxUnavailable(
            "the stdio sandbox's proxied network needs python3 in /usr/bin: install "
            "python3 or set host.mcp_stdio_network to none or host"
        )

    def handoff_command(
        self, folder: Path, channel: int, port: int, command: Sequence[str]
    ) -> list[str]:
        """What runs ``command`` in the sandbox once its proxy's socket, listening on
        ``port`` of the sandbox's loopback, was sent over the descriptor ``channel``."""
        python = self.handoff_python(folder)
        return [python, "-I", "-S", "-c", HANDOFF, str(channel), str(port), *command]

    async def check(self, folder: Path) -> None:
        """Runs ``true`` in the sandbox until it once works: ``SandboxUnavailable`` with
        bwrap's own words when this machine cannot make one (no user namespaces for the
        host's user, a folder of ``host.mcp_stdio_paths`` missing). Only a success is kept:
        the next start after a failure asks again (a missing folder may have been made)."""
        if not self._works:
            if self.network == "proxied":
                self.handoff_python(folder)
            await self._try(folder)
            self._works = True

    async def _try(self, folder: Path) -> None:
        true = shutil.which("true", path="/usr/bin:/bin") or "/bin/true"
        process = await asyncio.create_subprocess_exec(
            *self.arguments(folder),
            "--",
            true,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={},
        )
        try:
            _out, err = await asyncio.wait_for(process.communicate(), CHECK_SECONDS)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise SandboxUnavailable("the stdio sandbox did not start in time") from None
        if process.returncode != 0:
            said = err.decode("utf-8", "replace").strip().splitlines()
            reason = said[-1][:200] if said else f"exit status {process.returncode}"
            raise SandboxUnavailable(f"the stdio sandbox could not start: {reason}")
