"""The stdio transport of an MCP session: the server's process, its stdin and stdout as
the SDK's message streams, its stderr to the host log.

The SDK's own stdio client passes part of the host's environment and takes no limits, so
the process is started here (``child_process``). A line on stdout that is not JSON-RPC
ends the session: the server is broken, and says so in its status (``Ended.reason``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp import types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from server.common.public_addresses import PublicOnlyPolicy, Resolver, system_resolve
from server.host.agents.mcp.child_process import child_environment, limited_command
from server.host.agents.mcp.sandbox import SandboxUnavailable, StdioSandbox
from server.host.agents.mcp.stdio_egress import (
    EgressProxy,
    HandoffFailed,
    proxy_environment,
    receive_listener,
)

log = logging.getLogger(__name__)

# The longest line (one message) a server may write to stdout.
MAX_LINE_BYTES = 16 * 1024 * 1024
# What of a server's stderr reaches the host log: this many lines of a session, each cut.
STDERR_LINES = 200
STDERR_LINE_CHARS = 500
# After stdin closes, how long the server has to end before it is terminated, then killed.
EXIT_SECONDS = 2.0
# How often the end of a server's process group is looked for, once it was told to end.
GROUP_POLL_SECONDS = 0.05


@dataclass
class Ended:
    """Why the session's transport ended, when the server (not the host) ended it."""

    reason: str | None = None


@dataclass(frozen=True)
class StdioCommand:
    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(repr=False)
    cwd: Path


@contextlib.asynccontextmanager
async def stdio_transport(
    spec: StdioCommand,
    server_name: str,
    ended: Ended,
    gone: asyncio.Event,
    sandbox: StdioSandbox | None,
    *,
    policy: PublicOnlyPolicy,
    resolver: Resolver = system_resolve,
) -> AsyncIterator[TransportStreams]:
    """Start the server's process (in ``sandbox``, when the host keeps one) and yield the
    SDK's streams; ``ended`` and ``gone`` say when and why the server ended on its own. A
    sandbox with the proxied network reaches what ``policy`` allows through the host."""
    spec.cwd.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = child_environment(spec.env)
    proxied = sandbox is not None and sandbox.network == "proxied"
    if sandbox is not None:
        # Its folder is its home: what it caches (a package manager's downloads) stays there.
        env.setdefault("HOME", str(spec.cwd))
        await sandbox.check(spec.cwd)
    if proxied:
        env.update(proxy_environment(node_options=env.get("NODE_OPTIONS", "")))
    async with contextlib.AsyncExitStack() as stack:
        channel = inherited = None
        if proxied:
            channel, inherited = socket.socketpair()
            stack.callback(channel.close)
        handoff = None if inherited is None else inherited.fileno()
        try:
            process = await asyncio.create_subprocess_exec(
                *limited_command(spec.command, spec.args, env, sandbox, spec.cwd, handoff),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=spec.cwd,
                start_new_session=True,
                limit=MAX_LINE_BYTES,
                pass_fds=() if handoff is None else (handoff,),
            )
        finally:
            if inherited is not None:
                inherited.close()
        stack.push_async_callback(_stop, process)
        if channel is not None:
            try:
                listener = await receive_listener(channel)
            except HandoffFailed as failed:
                raise SandboxUnavailable(str(failed)) from None
            await stack.enter_async_context(EgressProxy(listener, policy, resolver, server_name))
        async with _streams(process, server_name, ended, gone) as streams:
            yield streams


@contextlib.asynccontextmanager
async def _streams(
    process: asyncio.subprocess.Process, server_name: str, ended: Ended, gone: asyncio.Event
) -> AsyncIterator[TransportStreams]:
    """The SDK's streams over a started server's stdin and stdout, its stderr to the log;
    leaving stops the process."""
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    closing = False

    def end(reason: str) -> None:
        if closing:
            return  # the host ends the session: not the server's fault
        if ended.reason is None:
            ended.reason = reason
        gone.set()

    async def read_stdout() -> None:
        assert process.stdout
        async with read_writer:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:
                    end(f"the server wrote a line longer than {MAX_LINE_BYTES} bytes to stdout")
                    return
                if not line:
                    code = await process.wait()
                    end(f"the server stopped (exit status {code})")
                    return
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError:
                    end("the server wrote something that is not JSON-RPC to stdout")
                    return
                try:
                    await read_writer.send(SessionMessage(message))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def write_stdin() -> None:
        assert process.stdin
        async with write_reader:
            async for message in write_reader:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    process.stdin.write(data.encode("utf-8") + b"\n")
                    await process.stdin.drain()
                except (ConnectionError, OSError):
                    return

    async def read_stderr() -> None:
        assert process.stderr
        logged = 0
        while True:
            try:
                line = await process.stderr.readline()
            except ValueError:
                continue  # a line too long to read whole: its rest is read as lines
            if not line:
                return
            if logged < STDERR_LINES:
                text = line.decode("utf-8", "replace").rstrip()[:STDERR_LINE_CHARS]
                log.info("mcp server %s: %s", server_name, text)
            elif logged == STDERR_LINES:
                log.info("mcp server %s: further stderr not logged", server_name)
            logged += 1

    tasks = [
        asyncio.create_task(read_stdout()),
        asyncio.create_task(write_stdin()),
        asyncio.create_task(read_stderr()),
    ]
    try:
        yield read_stream, write_stream
    finally:
        closing = True
        await _stop(process)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for stream in (read_stream, write_stream):
            await stream.aclose()


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close stdin, give the server ``EXIT_SECONDS`` to end, then end its whole group:
    what it started and left running too, whether or not the server itself ended."""
    if process.returncode is None:
        assert process.stdin
        with contextlib.suppress(OSError):
            process.stdin.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EXIT_SECONDS):
                await process.wait()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            break  # no one is left in the group
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(EXIT_SECONDS):
                while _group_lives(process.pid):
                    if process.returncode is None:
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(GROUP_POLL_SECONDS):
                                await process.wait()
                    else:
                        await asyncio.sleep(GROUP_POLL_SECONDS)
                return
    await process.wait()


def _group_lives(group: int) -> bool:
    """Whether a process of ``group`` still runs. A zombie does not count: it has ended, and
    waits for whoever adopted it to read its status (the sandbox's first process, left when
    the sandbox ends, is the machine's init's to read, which may take it a while)."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    return any(_runs_in(entry, group) for entry in entries if entry.isdigit())


def _runs_in(pid: str, group: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    # After the name: the state, the parent's id, the process group's.
    return fields[0] != "Z" and fields[2] == str(group)
