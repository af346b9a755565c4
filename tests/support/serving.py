"""A real ``crewhost serve`` subprocess on a free port, for the operations tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support import commands
from tests.support.commands import CREWHOST, PIPE, Forked, serve_arguments

# Cheap hashing for sign-ups under load; production keeps the defaults.
FAST_ENV = {
    "CREWHOST_SECURITY_PASSWORD_HASH_TIME_COST": "1",
    "CREWHOST_SECURITY_PASSWORD_HASH_MEMORY_KIB": "1024",
    "CREWHOST_SECURITY_PASSWORD_HASH_PARALLELISM": "1",
}


async def run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Run one ``crewhost`` command to its end."""
    return await commands.run(
        CREWHOST, *args, stdin=stdin, env={**os.environ, **FAST_ENV, **(env or {})}
    )


@dataclass
class Served:
    url: str
    process: Forked
    setup_code: str | None

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)


@asynccontextmanager
async def serving(data_dir: Path, *, expect_setup: bool = True) -> AsyncIterator[Served]:
    """``crewhost serve`` on ``data_dir``; stopped (or reaped after a kill) at the end."""
    process = await commands.start(
        CREWHOST,
        *serve_arguments(data_dir),
        stdout=PIPE,
        stderr=PIPE,
        # The writers sign up from one loopback address faster than anyone may in production.
        env={**os.environ, **FAST_ENV, "CREWHOST_SECURITY_SIGNIN_PER_ADDRESS_BURST": "1000000"},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        url = None
        while url is None:
            line = await asyncio.wait_for(process.stderr.readline(), 60)
            assert line, "crewhost serve ended before it listened"
            entry = json.loads(line)
            url = entry.get("url") if entry.get("message") == "hub listening" else None
        code = None
        if expect_setup:
            link = ""
            while "#code=" not in link:
                link = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
            code = link.strip().split("#code=")[1]
        # The pipes are drained so a chatty server never blocks on a full one.
        drains = [
            asyncio.create_task(_drain(process.stdout)),
            asyncio.create_task(_drain(process.stderr)),
        ]
        yield Served(url, process, code)
    finally:
        if process.returncode is None:
            process.terminate()
        await asyncio.wait_for(process.wait(), 30)
        # Read to the end, so the pipes' transports close before the loop does.
        pending = locals().get("drains", [])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*pending), 10)
        for drain in pending:
            drain.cancel()


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass
