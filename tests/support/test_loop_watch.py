"""The watchdog that every async test runs under does fail a test that blocks the loop."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from types import FrameType
from typing import Any

import pytest

from tests.support import loop_watch
from tests.support.loop_watch import (
    BLOCK_LIMIT_SECONDS,
    _in_a_socket_call,
    _waiting_in_selector,
    watch_event_loop,
)


async def _watched(body_seconds: float, *, blocking: bool) -> None:
    watch = watch_event_loop()
    await anext(watch)
    if blocking:
        time.sleep(body_seconds)  # noqa: ASYNC251 - the point of the test
    else:
        await asyncio.sleep(body_seconds)
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


@pytest.mark.allow_blocking
async def test_a_blocking_call_fails_the_test() -> None:
    # Well past the limit: on a busy machine the watchdog's own thread waits for a CPU too,
    # and it must wake at least once while the loop is still blocked.
    with pytest.raises(AssertionError, match="event loop was blocked"):
        await _watched(BLOCK_LIMIT_SECONDS + 1.5, blocking=True)


@pytest.mark.allow_blocking
@pytest.mark.parametrize(
    "counter",
    [
        # The loop thread waited for a CPU: the kernel adds the wait to the thread's
        # run-queue delay only as the thread runs again, so the watchdog, reading it
        # meanwhile, sees a late beat that the next beat finds was the kernel's.
        "_run_queue_wait",
        # Another thread holds the interpreter's lock and waits for a CPU; the loop
        # thread, back from a call that let the lock go, waits for the lock: the kernel
        # counts the other thread's wait when it runs again.
        "_others_run_queue_wait",
    ],
)
async def test_a_wait_the_kernel_counts_late_is_not_a_block(
    monkeypatch: pytest.MonkeyPatch, counter: str
) -> None:
    loop_ident = threading.get_ident()
    waited, counted = [0.0], [0.0]

    def read_late(_thread_id: int) -> float:
        if threading.get_ident() == loop_ident:
            counted[0] = waited[0]  # the waiting thread has run: its wait is counted now
        return counted[0]

    monkeypatch.setattr(loop_watch, counter, read_late)
    watch = watch_event_loop()
    await anext(watch)
    waited[0] = BLOCK_LIMIT_SECONDS + 0.5
    time.sleep(BLOCK_LIMIT_SECONDS + 0.5)  # noqa: ASYNC251 - stands for the wait
    await asyncio.sleep(0.1)
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


@pytest.mark.allow_blocking
async def test_time_the_hypervisor_held_the_cpus_is_not_a_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stolen = [0.0]
    monkeypatch.setattr(loop_watch, "_stolen", lambda: stolen[0])
    watch = watch_event_loop()
    await anext(watch)
    stolen[0] = BLOCK_LIMIT_SECONDS + 0.5
    time.sleep(BLOCK_LIMIT_SECONDS + 0.5)  # noqa: ASYNC251 - stands for the stolen time
    await asyncio.sleep(0.1)
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


async def test_awaiting_is_fine() -> None:
    await _watched(BLOCK_LIMIT_SECONDS + 0.25, blocking=False)


async def test_a_loop_waiting_in_its_selector_is_not_counted_as_blocked() -> None:
    """Lateness while the loop sits in its selector comes from outside the loop's code."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    seen: list[bool] = []
    sampled = asyncio.Event()

    def sample() -> None:
        # The loop waits in its selector but for the watchdog's beats: sampled until it
        # is seen there (a sample can land on a beat on a busy machine).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(seen):
            seen.append(_waiting_in_selector(sys._current_frames().get(loop_thread)))
            time.sleep(0.01)
        loop.call_soon_threadsafe(sampled.set)

    threading.Timer(0.05, sample).start()
    await sampled.wait()  # nothing of the test runs on the loop meanwhile
    assert any(seen)
    assert not _waiting_in_selector(sys._current_frames().get(loop_thread))  # running now


async def test_a_loop_in_a_transports_socket_call_is_not_counted_as_blocked() -> None:
    """A transport's send on its non-blocking socket never waits for the other end: a late
    return from it is the machine's (a starved kernel, another thread's turn)."""
    left, right = socket.socketpair()
    seen: list[FrameType] = []

    class Watched:
        """The transport's socket, noting the frame that calls its send."""

        def __init__(self, sock: socket.socket) -> None:
            self._sock = sock

        def send(self, data: bytes) -> int:
            seen.append(sys._getframe(1))
            return self._sock.send(data)

        def __getattr__(self, name: str) -> object:
            return getattr(self._sock, name)

    transport, _ = await asyncio.get_running_loop().create_connection(asyncio.Protocol, sock=left)
    try:
        transport._sock = Watched(left)  # type: ignore[attr-defined]
        transport.write(b"ping")
        [caller] = seen
        assert _in_a_socket_call(caller)
        assert not _in_a_socket_call(sys._getframe())
        assert not _in_a_socket_call(None)
    finally:
        transport.close()
        right.close()


class _LateThread(threading.Thread):
    """A thread that gets its CPU late, as on a starved machine: ``start`` waits for it."""

    def _bootstrap_inner(self) -> None:
        time.sleep(BLOCK_LIMIT_SECONDS + 0.5)
        super()._bootstrap_inner()  # type: ignore[misc]


async def test_waiting_for_a_started_thread_to_run_is_not_counted_as_blocked() -> None:
    """An executor that grows on a starved machine waits for its new thread to get a CPU:
    the kernel's delay, not a blocking call of the test's."""
    watch = watch_event_loop()
    await anext(watch)
    late = _LateThread(target=lambda: None)
    late.start()
    await asyncio.sleep(0.1)  # the watchdog samples the loop after it moves again
    late.join()
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


async def test_a_test_that_runs_long_is_told_where_its_tasks_wait(
    capsys: pytest.CaptureFixture[str],
) -> None:
    never = asyncio.Event()

    async def sender_loop() -> None:
        await never.wait()

    stuck = asyncio.create_task(sender_loop())
    async for _ in watch_event_loop(hang_report_seconds=0.05):
        await asyncio.sleep(0.2)
    stuck.cancel()
    report = capsys.readouterr().err
    assert "the loop's tasks wait in" in report
    assert f"{__file__}:" in report
    assert "in sender_loop" in report
    assert "locks.py" in report  # down to the awaited Event


def _process_start_then(monkeypatch: pytest.MonkeyPatch, after_seconds: float) -> None:
    """asyncio's next process start waits a second for the process to exec, then blocks
    for ``after_seconds`` once the process has started."""
    fork_exec = subprocess._fork_exec  # type: ignore[attr-defined]

    def late_fork_exec(*args: object) -> int:
        time.sleep(BLOCK_LIMIT_SECONDS + 0.5)
        return fork_exec(*args)  # type: ignore[no-any-return]

    class BlockingAfterStartPopen(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            time.sleep(after_seconds)

    monkeypatch.setattr(subprocess, "_fork_exec", late_fork_exec)
    monkeypatch.setattr(subprocess, "Popen", BlockingAfterStartPopen)


async def test_waiting_for_a_started_process_to_exec_is_not_counted_as_blocked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """asyncio starts a process by waiting for it to exec; on a starved machine that wait is
    the new process's for a CPU, the kernel's delay, not a blocking call of the test's.
    Nor is it counted once the loop has moved on, seen elsewhere before its next beat (a
    loaded machine keeps the loop thread that long from its beat)."""
    _process_start_then(monkeypatch, BLOCK_LIMIT_SECONDS / 2)
    watch = watch_event_loop()
    await anext(watch)
    process = await asyncio.create_subprocess_exec("true")
    assert await process.wait() == 0
    await asyncio.sleep(0.1)  # the watchdog samples the loop after it moves again
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


@pytest.mark.allow_blocking
async def test_a_block_right_after_a_process_started_fails_the_test(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _process_start_then(monkeypatch, BLOCK_LIMIT_SECONDS + 1.5)
    watch = watch_event_loop()
    await anext(watch)
    process = await asyncio.create_subprocess_exec("true")
    assert await process.wait() == 0
    await asyncio.sleep(0.1)
    with pytest.raises(AssertionError, match="event loop was blocked"):
        await anext(watch)


@pytest.mark.allow_blocking
async def test_another_thread_holding_the_interpreter_is_not_a_block_of_the_loop() -> None:
    # A C call that never lets the interpreter's lock go, on a thread of its own, for
    # longer than the limit, while the loop thread is in a callback: the loop thread waits
    # for the lock (it does not run), and the watchdog cannot take it either.
    started, done = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        sum(range(12 * 10**7))  # about 1.5 s here, the lock held throughout
        done.set()

    watch = watch_event_loop()
    await anext(watch)
    thread = threading.Thread(target=hold)
    thread.start()
    started.wait()
    while not done.is_set():  # the callback goes on once the lock comes back
        pass
    thread.join()
    await asyncio.sleep(0.1)
    with pytest.raises(StopAsyncIteration):
        await anext(watch)
