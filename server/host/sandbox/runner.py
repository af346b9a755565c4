"""Runs agent JavaScript in QuickJS compiled to WebAssembly, off the event loop.

Each script gets a fresh runtime in a thread of its own, so a script that computes
forever never holds up the event loop: the loop only waits for a future. The limits
are the runtime's (memory and stack) and ours: one deadline around the whole run,
helper calls included, enforced twice. The engine's interrupt handler stops the
script at the deadline (or when the caller gives up), and the caller stops waiting
at the deadline whatever the thread is doing; a thread caught inside one long native
call is abandoned and ends by itself once the call returns and the interrupt fires.

The script reaches the host only through the helpers the caller names: each is an
async function in the script that crosses back to the caller's event loop with its
arguments as JSON and resumes the script with the JSON answer. Arguments longer than
``MAX_HELPER_ARGS`` characters are refused before they cross. Nothing else is there:
no modules, network, files, timers or process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

import quickjs_rs
from wasmtime import Trap

from server.host.sandbox.driver import Interrupted, NeverSettles, ScriptDriver

log = logging.getLogger(__name__)

MEMORY_LIMIT = 64 * 1024 * 1024
STACK_LIMIT = 1024 * 1024
DEFAULT_DEADLINE = 60.0
LONGEST_DEADLINE = 120.0
# Room in the guest's linear memory for its static data beside heap and stack.
_STATIC_MARGIN = 4 * 1024 * 1024
# A trap this close to the memory cap is taken for a failed growth.
_GROWTH_MARGIN = 2 * 1024 * 1024

# What ``console.log`` keeps: lines, and characters of each.
MAX_LOG_LINES = 200
MAX_LOG_LINE = 2000

# The longest JSON text of one helper call's arguments: a few identical references make a
# small value in the script a long text, and the host parses it on its event loop.
MAX_HELPER_ARGS = 1024 * 1024

# Names a script written for a page reaches for; the message says where the page is.
_PAGE_GLOBALS = ("document", "window", "location", "page", "$")

Status = Literal["ok", "error", "timeout", "memory_limit", "stack_limit", "stopped"]

# How many scripts run at once in one host, across its teams (each may take its whole
# linear memory, about 69 MiB); one past them waits for a place, within its deadline.
MAX_RUNNING = 16


class SandboxSlots:
    """The places scripts run in. A place is a thread's, taken before its runtime is made
    and given back once the runtime is gone, so a thread left behind in a long native
    call still holds its place (and its memory) until it ends."""

    def __init__(self, places: int = MAX_RUNNING) -> None:
        self.places = places
        self._free = threading.BoundedSemaphore(places)

    def take(self, given_up: Callable[[], bool]) -> bool:
        """Waits for a place in the calling thread; False once ``given_up`` is true."""
        while not given_up():
            if self._free.acquire(timeout=0.05):
                return True
        return False

    def give_back(self) -> None:
        self._free.release()


HOST_SLOTS = SandboxSlots()

# Answers a helper with ``(name, JSON arguments)``: JSON ``{"ok": true, "value"}`` or
# ``{"ok": false, "code", "message"}``. It runs on the caller's event loop.
HostCall = Callable[[str, str], Coroutine[Any, Any, str]]


@dataclass(frozen=True)
class SandboxLimits:
    """What one script may use."""

    memory_bytes: int = MEMORY_LIMIT
    stack_bytes: int = STACK_LIMIT
    deadline: float = DEFAULT_DEADLINE

    @property
    def linear_memory_bytes(self) -> int:
        """The cap on the guest's whole memory: the heap, its stack and static data."""
        return self.memory_bytes + self.stack_bytes + _STATIC_MARGIN


@dataclass(frozen=True)
class SandboxOutcome:
    """How a script ended: its JSON value (as text), or why it has none, and its log."""

    status: Status
    value_json: str = "null"
    message: str | None = None
    error_name: str | None = None
    error_code: str | None = None
    log: list[str] = field(default_factory=list)
    # The script did not compile (nothing of it ran).
    parse_error: bool = False
    # Seconds from the call to the script's first line (the runtime's start).
    start_seconds: float = 0.0

    @property
    def value(self) -> Any:
        return json.loads(self.value_json)


def _prelude() -> str:
    return resources.files(__package__).joinpath("js/prelude.js").read_text("utf-8")


_PRELUDE = _prelude()


# The wrapper every script runs in (``js/script.js``), and the marker the script replaces.
_SCRIPT_MARKER = "/*@agent-script@*/"
_WRAPPER = resources.files(__package__).joinpath("js/script.js").read_text("utf-8")


def _wrapped(source: str) -> str:
    """The agent's script as the body of an async function, called: the expression's
    value is the script's promise. A ``return`` gives its value; ``undefined`` is null.
    """
    before, after = _WRAPPER.split(_SCRIPT_MARKER, 1)
    return before + source + after


def _page_hint(name: str | None, message: str) -> str:
    if name == "ReferenceError" and any(
        message.startswith(f"{page_name} is not defined") for page_name in _PAGE_GLOBALS
    ):
        return (
            f"{message}: the script runs in a sandbox, not in the page; "
            "read the page with evaluate(...)"
        )
    return message


def _script_error(error: dict[str, Any], log_lines: list[str], start: float) -> SandboxOutcome:
    name = error.get("name")
    message = str(error.get("message"))
    if name == "InternalError" and message in ("out of memory", "string too long"):
        return SandboxOutcome(
            "memory_limit",
            message=f"the script used more memory than it may ({message})",
            log=log_lines,
            start_seconds=start,
        )
    if name == "RangeError" and "call stack" in message:
        return SandboxOutcome(
            "stack_limit",
            message="the script recursed too deeply",
            log=log_lines,
            start_seconds=start,
        )
    return SandboxOutcome(
        "error",
        message=f"{name}: {_page_hint(name, message)}"[:2000],
        error_name=name,
        error_code=error.get("code"),
        log=log_lines,
        start_seconds=start,
    )


class _Run:
    """One script in its own thread; the caller's loop hears the outcome once."""

    def __init__(
        self,
        source: str,
        helpers: Sequence[str],
        host: HostCall | None,
        limits: SandboxLimits,
        loop: asyncio.AbstractEventLoop,
        slots: SandboxSlots,
    ) -> None:
        self._slots = slots
        self._placed = False
        self._source = source
        self._helpers = list(helpers)
        self._host = host
        self._limits = limits
        self._loop = loop
        self._began = time.monotonic()
        self._deadline = self._began + limits.deadline
        self._stop = threading.Event()
        self.done: asyncio.Future[SandboxOutcome] = loop.create_future()
        self._started_at: float | None = None
        self._memory_at_trap = 0
        # The script's console lines, kept host-side.
        self._log: list[str] = []
        # Helper calls running on the caller's loop now; a stop cancels them.
        self._in_flight: set[concurrent.futures.Future[str]] = set()

    def stop(self) -> None:
        """Makes the script stop at its next interrupt poll, and its helper calls at once."""
        self._stop.set()
        for future in list(self._in_flight):
            future.cancel()

    def _interrupted(self) -> bool:
        return self._stop.is_set() or time.monotonic() >= self._deadline

    def _deliver(self, outcome: SandboxOutcome) -> None:
        def settle() -> None:
            if not self.done.done():
                self.done.set_result(outcome)

        # The caller's loop may have closed: then nobody waits any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(settle)

    def timed_out(self) -> SandboxOutcome:
        """The outcome of a run its deadline ended, begun or still waiting for a place."""
        if not self._placed:
            message = (
                f"the script did not start: the host was running {self._slots.places} "
                f"scripts, and none ended within its {self._limits.deadline:g} s deadline"
            )
        else:
            message = f"the script ran longer than its {self._limits.deadline:g} s deadline"
        return self._ended("timeout", message)

    def work(self) -> None:
        if not self._slots.take(self._interrupted):
            stopped = self._stop.is_set()
            self._deliver(
                self._ended("stopped", self._interrupt_message()) if stopped else self.timed_out()
            )
            return
        self._placed = True
        try:
            self._deliver(self._outcome())
        finally:
            self._slots.give_back()

    def _outcome(self) -> SandboxOutcome:
        try:
            outcome = asyncio.run(self._drive())
        except Trap:
            # The instance trapped: its memory could not grow any more, or the guest's own
            # stack ran out before QuickJS's check did.
            if self._memory_at_trap >= self._limits.linear_memory_bytes - _GROWTH_MARGIN:
                outcome = self._ended("memory_limit", "the script used more memory than it may")
            else:
                outcome = self._ended("stack_limit", "the script recursed too deeply")
        except quickjs_rs.MemoryLimitError:
            outcome = self._ended("memory_limit", "the script used more memory than it may")
        except quickjs_rs.InterruptError:
            outcome = self._ended(self._interrupt_status(), self._interrupt_message())
        except Interrupted:
            outcome = self._ended(self._interrupt_status(), self._interrupt_message())
        except NeverSettles:
            outcome = self._ended("error", "the script awaits a promise that nothing settles")
        except quickjs_rs.JSError as exc:
            # What the script throws settles its promise: what reaches here did not compile
            # (or broke out of its function and threw there).
            outcome = SandboxOutcome(
                "error",
                message=f"{exc.name}: {exc.message}"[:2000],
                error_name=exc.name,
                parse_error=exc.name == "SyntaxError",
                log=list(self._log),
                start_seconds=self._start_seconds(),
            )
        except Exception as exc:
            log.warning("sandbox run failed with %s", type(exc).__name__)
            outcome = self._ended("error", "the sandbox failed to run the script")
        return outcome

    def _interrupt_status(self) -> Status:
        return "stopped" if self._stop.is_set() else "timeout"

    def _interrupt_message(self) -> str:
        if self._stop.is_set():
            return "the script was stopped"
        return f"the script ran longer than its {self._limits.deadline:g} s deadline"

    def _ended(self, status: Status, message: str) -> SandboxOutcome:
        return SandboxOutcome(status, message=message, start_seconds=self._start_seconds())

    def _start_seconds(self) -> float:
        return (self._started_at or time.monotonic()) - self._began

    async def _drive(self) -> SandboxOutcome:
        with quickjs_rs.Runtime(
            memory_limit=self._limits.memory_bytes, stack_limit=self._limits.stack_bytes
        ) as runtime:
            # Our deadline counts the whole run; the engine's own pauses while a helper runs.
            runtime._engine_rt.set_interrupt_handler(self._interrupted)
            with runtime.new_context(timeout=self._limits.deadline + 1.0) as context:
                # QuickJS's own limit leaves out array buffers: the guest's whole linear
                # memory (heap, buffers, stack, static data) is capped as well.
                instance = context._engine_ctx._inst
                instance.store.set_limits(memory_size=self._limits.linear_memory_bytes)
                context.register("__crewhostHost", self._cross, is_async=True)
                context.register("__crewhostLog", self._log_line, is_async=False)
                context.globals["__crewhostHelpers"] = json.dumps(self._helpers)
                context.eval(_PRELUDE, filename="prelude.js")
                driver = ScriptDriver(context, self._interrupted)
                self._started_at = time.monotonic()
                try:
                    settled = await driver.run(_wrapped(self._source), "script.js")
                except Trap:
                    self._memory_at_trap = int(instance.mem.data_len(instance.store))
                    raise
                finally:
                    driver.close()
        try:
            json.loads(settled.value_json)
        except ValueError:
            return self._ended("error", "the script's value is not JSON")
        except RecursionError:
            return self._ended("error", "the script's value is nested too deeply")
        log_lines = list(self._log)
        if settled.error:
            if settled.error.get("name") == "InternalError" and self._interrupted():
                # The interrupt landed in a job the script's own try/catch wraps.
                return SandboxOutcome(
                    self._interrupt_status(),
                    message=self._interrupt_message(),
                    log=log_lines,
                    start_seconds=self._start_seconds(),
                )
            return _script_error(settled.error, log_lines, self._start_seconds())
        return SandboxOutcome(
            "ok", value_json=settled.value_json, log=log_lines, start_seconds=self._start_seconds()
        )

    def _log_line(self, line: object) -> None:
        """``console.log``: the first lines are kept here, where the script cannot go."""
        if len(self._log) < MAX_LOG_LINES:
            self._log.append(str(line)[:MAX_LOG_LINE])

    async def _cross(self, name: str, payload: object) -> str:
        """A helper call: runs on the caller's loop while the script awaits it here."""
        if not isinstance(payload, str):
            return json.dumps({"ok": False, "code": "notJson", "message": "arguments not JSON"})
        if self._host is None or name not in self._helpers:
            return json.dumps({"ok": False, "code": "noHelper", "message": f"no helper {name}"})
        if len(payload) > MAX_HELPER_ARGS:
            # Refused here, in the script's thread: the caller's loop never parses it.
            message = (
                f"the arguments of {name} are longer than {MAX_HELPER_ARGS} characters as JSON"
            )
            return json.dumps({"ok": False, "code": "argumentsTooLarge", "message": message})
        if self._interrupted():
            return json.dumps({"ok": False, "code": "stopped", "message": "the script stopped"})
        future = asyncio.run_coroutine_threadsafe(self._host(name, payload), self._loop)
        self._in_flight.add(future)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            # The caller gave up on the step: the script ends at its next interrupt poll.
            return json.dumps({"ok": False, "code": "stopped", "message": "the script stopped"})
        finally:
            self._in_flight.discard(future)


async def run_in_sandbox(
    source: str,
    *,
    helpers: Sequence[str] = (),
    host: HostCall | None = None,
    limits: SandboxLimits = SandboxLimits(),
    slots: SandboxSlots = HOST_SLOTS,
) -> SandboxOutcome:
    """Runs ``source`` (the body of an async function) in a fresh sandbox runtime, in one
    of ``slots``' places (waiting for one counts towards the deadline).

    Returns when the script ends or its deadline passes, whichever is first; the
    event loop keeps running meanwhile. Cancelling the call stops the script.
    """
    run = _Run(source, helpers, host, limits, asyncio.get_running_loop(), slots)
    thread = threading.Thread(target=run.work, name="sandbox", daemon=True)
    thread.start()
    try:
        return await asyncio.wait_for(asyncio.shield(run.done), limits.deadline)
    except TimeoutError:
        run.stop()
        return run.timed_out()
    except asyncio.CancelledError:
        run.stop()
        raise


def warm_up() -> None:
    """Compiles the engine once (the first runtime of a process takes most of a second)."""
    with quickjs_rs.Runtime() as runtime, runtime.new_context() as context:
        context.eval("0")
