"""Real upstream proxies for the proxy tests, from Debian's packages (``make proxy-tools``):
tinyproxy (HTTP, with or without BasicAuth) and microsocks (SOCKS5 with a sign-in).

Each one binds its outgoing connections to an address of its own on loopback, so a
fixture site can tell a connection that came through it from one that did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

LISTEN = "127.0.0.1"


@dataclass(frozen=True)
class Upstream:
    """A running upstream proxy: where it listens and the address it connects from."""

    port: int
    outgoing: str


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LISTEN, 0))
        return int(probe.getsockname()[1])


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed: run `make proxy-tools` (as root on Debian)")
    return path


async def _listening(port: int, process: asyncio.subprocess.Process) -> None:
    async with asyncio.timeout(10):
        while True:
            if process.returncode is not None:
                raise RuntimeError(f"the upstream proxy exited with {process.returncode}")
            try:
                _, writer = await asyncio.open_connection(LISTEN, port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return


@asynccontextmanager
async def _running(argv: list[str], port: int, outgoing: str) -> AsyncIterator[Upstream]:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await _listening(port, process)
        yield Upstream(port, outgoing)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await process.wait()


@asynccontextmanager
async def tinyproxy(
    folder: Path, *, outgoing: str, sign_in: tuple[str, str] | None = None
) -> AsyncIterator[Upstream]:
    """tinyproxy on a free loopback port; ``sign_in`` turns on its BasicAuth."""
    port = free_port()
    lines = [
        f"Port {port}",
        f"Listen {LISTEN}",
        f"Bind {outgoing}",
        "Timeout 30",
        "MaxClients 50",
        "LogLevel Critical",
        f'PidFile "{folder / f"tinyproxy-{port}.pid"}"',
        "Allow 127.0.0.1",
    ]
    if sign_in is not None:
        lines.append(f"BasicAuth {sign_in[0]} {sign_in[1]}")
    config = folder / f"tinyproxy-{port}.conf"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    async with _running([_require("tinyproxy"), "-d", "-c", str(config)], port, outgoing) as up:
        yield up


@asynccontextmanager
async def microsocks(*, outgoing: str, sign_in: tuple[str, str]) -> AsyncIterator[Upstream]:
    """microsocks on a free loopback port, asking for ``sign_in`` (RFC 1929)."""
    port = free_port()
    argv = [_require("microsocks"), "-i", LISTEN, "-p", str(port), "-b", outgoing]
    argv += ["-u", sign_in[0], "-P", sign_in[1]]
    async with _running(argv, port, outgoing) as up:
        yield up
