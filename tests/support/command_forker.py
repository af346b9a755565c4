"""A process that has imported both command lines once and forks a child for each command.

``python -m tests.support.command_forker SOCKET`` imports ``crewhost`` and
``crewhost-peer`` (all of the server a ``serve`` loads), prints ``ready`` and listens on the
Unix socket ``SOCKET``. Each connection asks for one command: a line of JSON
(``module``, ``args``, ``env``, ``cwd``, ``new_session``) with the three descriptors that
become the child's stdin, stdout and stderr. The forker answers ``{"pid": N, "failure":
""}`` once the child is set up (``failure`` says why it could not be) and, when that child
ends, ``{"status": S}`` (negative for a signal, as ``subprocess`` says it).

A child is a real process of its own: its own pid, descriptors, environment, folder and
signals, and it ends through the interpreter's own exit (``atexit``, threads joined,
buffers flushed). What it skips is the second or so of CPU a fresh interpreter spends
importing the server, several hundred times a run. A child dies with the forker, and the
forker ends when its stdin closes (the test process that started it is gone).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import selectors
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

READY = "ready"
COMMANDS = ("server.cli", "peer.cli")
# What ``crewhost serve``, the admin commands and ``crewhost-peer`` import as they run.
PRELOADED = (
    *COMMANDS,
    "server.serve",
    "server.admin",
    "server.admin_keys",
    "server.admin_backup",
    "server.ops.backup",
    "server.ops.doctor",
    "server.event_loop",
    "server.host.enrolment",
    "server.host.start",
    "server.common.sctp_bundling",
    "aiortc",
)
_PR_SET_PDEATHSIG = 1


@dataclass
class Command:
    module: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    new_session: bool


def _preload() -> None:
    gc.disable()
    for name in PRELOADED:
        __import__(name)
    # What every child shares stays out of its collections and its pages stay shared.
    gc.freeze()
    gc.enable()


def _read_request(connection: socket.socket) -> tuple[Command, list[int]]:
    data, fds, _flags, _address = socket.recv_fds(connection, 1 << 20, 3)
    while not data.endswith(b"\n"):
        more = connection.recv(1 << 20)
        if not more:
            raise ConnectionError("the request ended early")
        data += more
    request = json.loads(data)
    command = Command(
        request["module"], request["args"], request["env"], request["cwd"], request["new_session"]
    )
    return command, fds


def _send(connection: socket.socket, message: dict[str, Any]) -> None:
    connection.sendall(json.dumps(message).encode() + b"\n")


def _serve(listener: socket.socket) -> Command:
    """Fork for each request until stdin closes; returns only in a child, with its command."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
    running: dict[int, tuple[int, socket.socket]] = {}
    while True:
        for key, _events in selector.select():
            if key.data == "stdin":
                if os.read(sys.stdin.fileno(), 4096):
                    continue
                for pid, _ in running.values():
                    os.kill(pid, signal.SIGTERM)
                raise SystemExit(0)
            if key.data == "listener":
                connection, _ = listener.accept()
                command, fds = _read_request(connection)
                started_read, started_write = os.pipe()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    listener.close()
                    connection.close()
                    os.close(started_read)
                    _become(command, fds, started_write)
                    return command
                os.close(started_write)
                for fd in fds:
                    os.close(fd)
                # As ``subprocess`` does: the pid is told once the child is set up.
                with os.fdopen(started_read, "rb") as started:
                    failure = started.read().decode()
                _send(connection, {"pid": pid, "failure": failure})
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, connection)
                selector.register(pidfd, selectors.EVENT_READ, pidfd)
                continue
            pidfd = key.data
            pid, connection = running.pop(pidfd)
            selector.unregister(pidfd)
            os.close(pidfd)
            _, status = os.waitpid(pid, 0)
            with contextlib.suppress(OSError):  # the test may have stopped listening
                _send(connection, {"status": os.waitstatus_to_exitcode(status)})
            connection.close()


def _become(command: Command, fds: list[int], started: int) -> None:
    """Set the child up as ``subprocess`` would before an exec; a failure is told to the
    forker through ``started`` (the child then ends), success by closing it."""
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if command.new_session:
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(command.cwd)
        os.environ.clear()
        os.environ.update(command.env)
        # What the standard library took from the forker's environment, taken again.
        tempfile.tempdir = None
        time.tzset()
    except OSError as exc:
        os.write(started, repr(exc).encode())
        os._exit(127)
    os.close(started)


def _run(command: Command) -> int | str | None:
    program = "crewhost-peer" if command.module == "peer.cli" else "crewhost"
    sys.argv = [program, *command.args]
    main = sys.modules[command.module].main
    result: int | str | None = main(command.args)
    return result


def main() -> None:
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(64)
    print(READY, flush=True)
    command = _serve(listener)
    # Only a child comes back here: its command ends the way ``python -m`` would.
    sys.exit(_run(command))


if __name__ == "__main__":
    main()
