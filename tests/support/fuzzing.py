"""How hard the fuzz tests try, and a ``crewhost serve`` for tests that call it synchronously.

The suite runs a small number of examples; ``CREWHOST_FUZZ=long`` runs many more
(see docs/operations.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tests.support.commands import ROOT, serve_arguments
from tests.support.serving import FAST_ENV

LONG = os.environ.get("CREWHOST_FUZZ", "") == "long"


def examples(short: int, long: int) -> int:
    """``short`` examples in the suite, ``long`` under ``CREWHOST_FUZZ=long``."""
    return long if LONG else short


@dataclass
class Serving:
    url: str
    setup_code: str
    process: subprocess.Popen[bytes]


@contextmanager
def serve_in_background(data_dir: Path, **env: str) -> Iterator[Serving]:
    """``crewhost serve`` on a free port, for callers without an event loop (schemathesis)."""
    process = subprocess.Popen(  # noqa: S603 - our own command line
        [sys.executable, "-m", "server.cli", *serve_arguments(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, **FAST_ENV, **env},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    drains: list[threading.Thread] = []
    try:
        url = None
        while url is None:
            line = process.stderr.readline()
            assert line, "crewhost serve ended before it listened"
            entry = json.loads(line)
            url = entry.get("url") if entry.get("message") == "hub listening" else None
        link = ""
        while "#code=" not in link:
            read = process.stdout.readline()
            assert read, "crewhost serve printed no setup link"
            link = read.decode()
        for stream in (process.stdout, process.stderr):
            drains.append(threading.Thread(target=_drain, args=(stream,), daemon=True))
            drains[-1].start()
        yield Serving(url, link.strip().split("#code=")[1], process)
    finally:
        process.terminate()
        process.wait(30)
        for drain in drains:
            drain.join(10)
        process.stdout.close()
        process.stderr.close()


def _drain(stream: IO[bytes]) -> None:
    while stream.read(65536):
        pass
