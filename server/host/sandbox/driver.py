"""Drives one script's promise to its end and reads its outcome through the engine.

The outcome is read by the host, never built by code the script could replace: the
settled value is turned into JSON text by the ``JSON.stringify`` taken before the
script ran (held here as a handle the script cannot reach), and a rejection's
name, message and code are read off the reason through the engine's handles.

The job queue is drained until it is empty: QuickJS runs at most 100,000 jobs per
drain, and quickjs-rs's own driver takes a queue left non-empty with no helper call
in flight for a promise nothing settles. A finite chain of microtasks completes; an
endless one runs until the interrupt handler stops it at the deadline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import quickjs_rs
from quickjs_rs import Context, Handle, _engine

# Promise states as the engine reports them.
_PENDING, _FULFILLED = 0, 1

_NOT_JSON = "the script returned a value that is not JSON"


class Interrupted(Exception):
    """The interrupt handler ended the script (deadline or stop)."""


class NeverSettles(Exception):
    """The script awaits a promise that nothing will settle."""


@dataclass(frozen=True)
class Settled:
    """The script's JSON value (as text), or its error as ``{name, message, code}``."""

    value_json: str = "null"
    error: dict[str, Any] | None = None


class ScriptDriver:
    """One script in one context: evaluated, driven, and read.

    ``interrupted`` is the runner's interrupt test (deadline passed or stop asked).
    """

    def __init__(self, context: Context, interrupted: Callable[[], bool]) -> None:
        self._context = context
        self._engine = context._engine_ctx
        self._interrupted = interrupted
        # The built-ins as they are before the script runs: it may replace the globals.
        self._stringify = context.eval_handle("JSON.stringify")
        self._to_text = context.eval_handle("String")

    def close(self) -> None:
        """Releases the held built-ins (before the context closes)."""
        self._stringify.dispose()
        self._to_text.dispose()

    async def run(self, code: str, filename: str) -> Settled:
        """Evaluates ``code`` (an expression whose value is the script's promise) and
        drives it. Raises ``quickjs_rs.JSError`` if it does not compile, ``Interrupted``
        or ``NeverSettles``."""
        try:
            # The engine's own eval, as quickjs-rs's async driver calls it: a helper
            # called before the script's first await is scheduled, not refused.
            raw = self._engine.eval_handle(code, filename=filename)
        except _engine.JSError as exc:
            name, message, stack = exc.args
            raise self._context._classify_jserror(name, message, stack, None) from None
        with Handle(self._context, raw) as outcome:
            if not outcome.is_promise():
                return self._fulfilled(outcome)
            state = await self._settle(outcome)
            with Handle(
                self._context, self._engine.promise_result(outcome._require_live())
            ) as result:
                if state == _FULFILLED:
                    return self._fulfilled(result)
                return Settled(error=self._error_of(result))

    async def _settle(self, promise: Handle) -> int:
        while True:
            # Each drain runs at most 100,000 jobs: drain until nothing is left.
            while self._engine.run_pending_jobs() > 0:
                pass
            state = int(self._engine.promise_state(promise._require_live()))
            if state != _PENDING:
                return state
            if self._interrupted():
                # The interrupt ended the job that would have settled it.
                raise Interrupted
            if not self._context._pending_tasks:
                if self._reject_undeliverable():
                    continue
                raise NeverSettles
            completed = self._context._pending_completed
            assert completed is not None, "a helper call is in flight without its event"
            await completed.wait()
            completed.clear()

    def _reject_undeliverable(self) -> bool:
        """Rejects helper calls whose answer could not be delivered; True if there were."""
        stuck = self._context._failed_settles
        self._context._failed_settles = {}
        for pending_id in stuck:
            self._engine.reject_pending(pending_id, "HostError", "Host function failed", None)
        return bool(stuck)

    def _fulfilled(self, value: Handle) -> Settled:
        try:
            with self._stringify.call(value) as text:
                json_text = text.to_python()
        except (quickjs_rs.InterruptError, quickjs_rs.MemoryLimitError):
            raise
        except quickjs_rs.QuickJSError:
            # A cycle, a BigInt, a toJSON that throws or calls a helper.
            if self._interrupted():
                raise Interrupted from None
            return Settled(error={"name": "TypeError", "message": _NOT_JSON, "code": None})
        if json_text is None:  # undefined, a function, a symbol
            return Settled()
        if not isinstance(json_text, str):
            return Settled(error={"name": "TypeError", "message": _NOT_JSON, "code": None})
        return Settled(value_json=json_text)

    def _error_of(self, reason: Handle) -> dict[str, Any]:
        """``{name, message, code}`` of what the script threw (an Error or any value)."""
        if reason.type_of not in ("object", "function"):
            return {"name": "Error", "message": self._text(reason), "code": None}
        name = self._property(reason, "name")
        message = self._property(reason, "message")
        code = self._property(reason, "code")
        return {
            "name": name if isinstance(name, str) else "Error",
            "message": message if isinstance(message, str) else self._text(reason),
            "code": code if isinstance(code, str) else None,
        }

    def _property(self, value: Handle, key: str) -> Any:
        try:
            with value.get(key) as got:
                return got.to_python()
        except quickjs_rs.QuickJSError:
            return None

    def _text(self, value: Handle) -> str:
        try:
            with self._to_text.call(value) as text:
                shown = text.to_python()
        except quickjs_rs.QuickJSError:
            return "a value that cannot be shown"
        return shown if isinstance(shown, str) else "a value that cannot be shown"
