"""The sandbox a stdio MCP server runs in: bubblewrap (``bwrap``), namespaces of its own.

Inside, the server sees the system's programs and libraries (``/usr`` and the top-level
links into it) and the few files of ``/etc`` a program needs to resolve names and check
certificates, all read-only; the folders the host's operator lists
(``host.mcp_stdio_paths``, a runtime installed under ``/opt`` or a virtualenv), read-only
too; its own folder, read-write, as its home and working folder; a ``/tmp`` of its own,
and a ``/proc`` that shows its own processes alone. Nothing else of the machine is there:
not the host's data folder, not another team's files, not the host's configuration. It
runs as ``nobody`` of a user namespace of its own, so it holds no capability on the
machine, and with ``host.mcp_stdio_network`` off in a network namespace with nothing but
its own loopback.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

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
# How long the first check of the sandbox may take.
CHECK_SECONDS = 10.0
_INSTALL = "install Debian's bubblewrap package or turn host.mcp_stdio_sandbox off"


class SandboxUnavailable(Exception):
    """The sandbox cannot run a server on this machine; the message says why, for a
    person, and names the setting."""


class CommandHidden(FileNotFoundError):
    """The server's command is outside what the sandbox shows."""


@dataclass(eq=False)
class StdioSandbox:
    """How the host's stdio servers are confined (``host.mcp_stdio_sandbox``)."""

    paths: tuple[Path, ...] = ()
    network: bool = True
    bwrap: str | None = field(default_factory=lambda: shutil.which("bwrap"))
    _works: bool = field(default=False, repr=False)

    @classmethod
    def from_settings(cls, paths: Iterable[str], *, network: bool) -> StdioSandbox:
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
            *(() if self.network else ("--unshare-net",)),
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
        place = str(folder)
        line += ["--bind", place, place, "--chdir", place]
        return line

    async def check(self, folder: Path) -> None:
        """Runs ``true`` in the sandbox until it once works: ``SandboxUnavailable`` with
        bwrap's own words when this machine cannot make one (no user namespaces for the
        host's user, a folder of ``host.mcp_stdio_paths`` missing). Only a success is kept:
        the next start after a failure asks again (a missing folder may have been made)."""
        if not self._works:
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
