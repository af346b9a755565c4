"""``crewhost`` and ``crewhost-peer`` commands as processes forked from one that has imported
them (``tests.support.command_forker``), one forker a test process, started on first use.

``start`` answers a ``Forked`` that behaves as the ``asyncio.subprocess.Process`` the tests
used before: ``pid``, the pipes as streams, ``communicate``, ``wait``, ``returncode`` and
signals. A test that must exercise the installed entry points themselves starts them with
``asyncio.create_subprocess_exec`` as before (``tests/test_packaging.py`` does).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from tests.support.command_forker import READY

ROOT = Path(__file__).resolve().parents[2]
CREWHOST = "server.cli"
PEER = "peer.cli"
PIPE = asyncio.subprocess.PIPE
DEVNULL = asyncio.subprocess.DEVNULL
Stream = int | IO[Any] | None


def serve_arguments(data_dir: Path) -> list[str]:
    """``crewhost serve`` on a free loopback port and ``data_dir``, logging JSON."""
    return ["serve", "--port", "0", "--data-dir", str(data_dir), "--log-format", "json"]


class _Forker:
    """The test process's forker: started once, ended when the test process ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._folder = tempfile.TemporaryDirectory(prefix="crewhost-forker-")
        self.socket_path = os.path.join(self._folder.name, "forker.sock")

    def ensure(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.socket_path)
            process = subprocess.Popen(  # noqa: S603 - our own module
                [sys.executable, "-m", "tests.support.command_forker", self.socket_path],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=ROOT,
            )
            assert process.stdout is not None
            line = process.stdout.readline().decode().strip()
            if line != READY:
                process.kill()
                process.wait()
                raise RuntimeError(f"the command forker did not start (it said {line!r})")
            self._process = process
            atexit.register(self.stop)

    def stop(self) -> None:
        process = self._process
        if process is None:
            return
        self._process = None
        assert process.stdin is not None
        process.stdin.close()  # the forker's signal to end
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._folder.cleanup()


_forker = _Forker()


class _Signalled:
    """Signals for a forked process that has not ended (its pid may be another's after)."""

    pid: int

    def poll(self) -> int | None:
        raise NotImplementedError

    def send_signal(self, number: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Forked(_Signalled):
    """One command's process: the parts of ``asyncio.subprocess.Process`` the tests use."""

    def __init__(
        self,
        pid: int,
        control: socket.socket,
        stdin: asyncio.StreamWriter | None,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader | None,
    ) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._ended = asyncio.create_task(self._status(control))

    async def _status(self, control: socket.socket) -> int:
        reader, writer = await asyncio.open_unix_connection(sock=control)
        try:
            line = await reader.readline()
        finally:
            writer.close()
        if not line:
            raise RuntimeError(f"the command forker ended before process {self.pid} did")
        status: int = json.loads(line)["status"]
        self.returncode = status
        return status

    def poll(self) -> int | None:
        return self.returncode

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    async def communicate(self, data: bytes | None = None) -> tuple[bytes, bytes]:
        async def feed() -> None:
            if self.stdin is None:
                return
            if data:
                self.stdin.write(data)
                with contextlib.suppress(ConnectionError):
                    await self.stdin.drain()
            self.stdin.close()

        async def read(stream: asyncio.StreamReader | None) -> bytes:
            return await stream.read() if stream is not None else b""

        _, out, err = await asyncio.gather(feed(), read(self.stdout), read(self.stderr))
        await self.wait()
        return out, err


async def start(
    module: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    stdin: Stream = None,
    stdout: Stream = None,
    stderr: Stream = None,
) -> Forked:
    """Start ``module``'s command line (``CREWHOST`` or ``PEER``) with ``args``: ``env``
    replaces the environment (default: this process's); each stream is ``PIPE``,
    ``DEVNULL``, an open file or ``None``, this process's own."""
    await asyncio.to_thread(_forker.ensure)
    loop = asyncio.get_running_loop()
    ours, theirs = _descriptors(stdin, stdout, stderr)
    control = _ask(module, args, env, cwd, theirs, new_session=False)
    try:
        control.setblocking(False)
        pid = await _read_pid(control)
    except BaseException:
        control.close()
        raise
    writer = await _writer(loop, ours[0]) if ours[0] >= 0 else None
    out = await _reader(loop, ours[1]) if ours[1] >= 0 else None
    err = await _reader(loop, ours[2]) if ours[2] >= 0 else None
    return Forked(pid, control, writer, out, err)


class Background(_Signalled):
    """A command's process for a caller without an event loop: the parts of
    ``subprocess.Popen`` the tests use."""

    def __init__(self, pid: int, control: socket.socket) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._control = control
        self._said = b""

    def poll(self) -> int | None:
        if self.returncode is None:
            self._control.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                self._read_status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._control.settimeout(timeout)
            try:
                self._read_status()
            except TimeoutError:
                raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0) from None
        assert self.returncode is not None
        return self.returncode

    def _read_status(self) -> None:
        while not self._said.endswith(b"\n"):
            more = self._control.recv(4096)
            if not more:
                raise RuntimeError(f"the command forker ended before process {self.pid} did")
            self._said += more
        self.returncode = json.loads(self._said)["status"]
        self._control.close()


def start_in_background(
    module: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
    stdin: Stream = None,
    stdout: Stream = None,
    stderr: Stream = None,
    new_session: bool = False,
) -> Background:
    """``start`` for a caller without an event loop; ``new_session`` puts the process in a
    session (and process group) of its own, as ``subprocess``'s ``start_new_session``."""
    _forker.ensure()
    ours, theirs = _descriptors(stdin, stdout, stderr)
    assert ours == [-1, -1, -1], "a background command's streams are files or DEVNULL"
    control = _ask(module, args, env, cwd, theirs, new_session=new_session)
    said = b""
    while not said.endswith(b"\n"):
        more = control.recv(1)
        if not more:
            control.close()
            raise RuntimeError("the command forker closed the request without a pid")
        said += more
    try:
        pid = _pid(said)
    except BaseException:
        control.close()
        raise
    return Background(pid, control)


def _pid(said: bytes) -> int:
    answer = json.loads(said)
    if answer["failure"]:
        raise RuntimeError(f"the command could not start: {answer['failure']}")
    pid: int = answer["pid"]
    return pid


def _descriptors(stdin: Stream, stdout: Stream, stderr: Stream) -> tuple[list[int], list[int]]:
    """This process's end of each stream (-1 where it keeps none) and the child's."""
    ours: list[int] = []
    theirs: list[int] = []
    for index, choice in enumerate((stdin, stdout, stderr)):
        if choice == PIPE:
            read_end, write_end = os.pipe()
            ours.append(write_end if index == 0 else read_end)
            theirs.append(read_end if index == 0 else write_end)
        elif choice == DEVNULL:
            ours.append(-1)
            theirs.append(os.open(os.devnull, os.O_RDWR))
        elif choice is None:
            ours.append(-1)
            theirs.append(os.dup(index))
        else:
            assert not isinstance(choice, int)
            ours.append(-1)
            theirs.append(os.dup(choice.fileno()))
    return ours, theirs


def _ask(
    module: str,
    args: tuple[str, ...],
    env: dict[str, str] | None,
    cwd: Path,
    descriptors: list[int],
    *,
    new_session: bool,
) -> socket.socket:
    """Ask the forker for the command, handing it ``descriptors`` (closed here, sent or not);
    the answer is read from the socket returned."""
    control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        control.connect(_forker.socket_path)
        request = {
            "module": module,
            "args": list(args),
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd),
            "new_session": new_session,
        }
        socket.send_fds(control, [json.dumps(request).encode() + b"\n"], descriptors)
    except BaseException:
        control.close()
        raise
    finally:
        for fd in descriptors:
            os.close(fd)
    return control


async def run(
    module: str,
    *args: str,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> tuple[int, str, str]:
    """Run one command to its end: its exit status, stdout and stderr."""
    process = await start(module, *args, env=env, cwd=cwd, stdin=PIPE, stdout=PIPE, stderr=PIPE)
    out, err = await process.communicate(stdin)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def _read_pid(control: socket.socket) -> int:
    loop = asyncio.get_running_loop()
    data = b""
    while not data.endswith(b"\n"):
        # One byte at a time: what follows the pid is the status, read by its own task.
        more = await loop.sock_recv(control, 1)
        if not more:
            raise RuntimeError("the command forker closed the request without a pid")
        data += more
    return _pid(data)


async def _reader(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0)
    )
    return reader


async def _writer(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamWriter:
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd, "wb", 0)
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)
