"""The ``run_script`` tool: many page steps in one call, from JavaScript run in the sandbox.

The agent's script runs in the QuickJS sandbox (``server.host.sandbox``), never in the
page and never in the host's own JavaScript engine. It awaits helpers named after the
action tools; each helper call is one step that runs the single tool's own function
with the tool's own argument repair and model, in its own slot of the tab's queue.
Before each step the tab is checked again: the caller must still reach it, it must
hold no secret, no person may hold it, no dialog may be open and its page must not
have crashed. A check that fails stops the script: the helper (and every later one)
throws, and the result says why in ``status``.

Consent: the whole script is one gated call. The member who consents sees the script
itself (it is the call's argument); the steps it runs ask nobody again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from pydantic import Field, ValidationError

from server.common.errors import CrewhostError
from server.host.browser.access import holds_secret
from server.host.browser.tabs import Tab
from server.host.sandbox.runner import SandboxLimits, SandboxOutcome, run_in_sandbox
from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.browser import (
    click,
    evaluate,
    hover,
    navigate,
    press,
    scroll,
    select_option,
    set_checked,
    snapshot,
    type_text,
    wait_for,
)
from server.host.tools.context import ToolContext
from server.host.tools.page.descriptions import on_page, script_summary
from server.host.tools.page.snapshots import shown_tab_url, take_snapshot
from server.host.tools.page.tab_access import reachable_tab
from server.host.tools.repair import (
    HELPER_TOOLS,
    SCRIPT_TOOLS,
    ScriptStep,
    repair_arguments,
    script_step,
)
from server.host.tools.results import ToolFailure

log = logging.getLogger(__name__)

MAX_STEPS = 200
MAX_VALUE_BYTES = 64 * 1024
MAX_EVALUATE_BYTES = 1024 * 1024
DEFAULT_TIMEOUT_MS = 60_000
LONGEST_TIMEOUT_MS = 120_000
# Between two polls of a page function that waitFor waits on.
_POLL_MS = 100

HELPERS = (*HELPER_TOOLS, "step", "sleep")

_TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        navigate.TOOL,
        click.TOOL,
        type_text.TOOL,
        press.TOOL,
        hover.TOOL,
        scroll.TOOL,
        select_option.TOOL,
        set_checked.TOOL,
        wait_for.TOOL,
        evaluate.TOOL,
        snapshot.TOOL,
    )
}
if set(_TOOLS) != set(SCRIPT_TOOLS):
    raise RuntimeError("run_script's tools are not repair.SCRIPT_TOOLS")

# Why a step may stop the whole script: the error code of a check or a step, as a status.
_STOPPING_CODES = {
    "tabHeldByPerson": "user_control",
    "tabHeld": "user_control",
    "dialogOpen": "dialog",
    "pageCrashed": "page_crashed",
    "tabNotFound": "tab_closed",
    "secretTab": "secret_tab",
}


class RunScriptArgs(TabArgs):
    """Input of ``run_script``."""

    script: str = Field(
        min_length=1,
        max_length=100_000,
        description=(
            "JavaScript, the body of an async function: await the helpers, return a JSON "
            "value (at most 64 KB)."
        ),
    )
    timeout_ms: int = Field(
        default=DEFAULT_TIMEOUT_MS,
        ge=1_000,
        le=LONGEST_TIMEOUT_MS,
        description="The deadline of the whole script, steps included, in milliseconds.",
    )


class _Stop(Exception):
    """A check before or during a step ends the script with ``status``."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _answer(value: Any) -> str:
    return json.dumps({"ok": True, "value": value}, ensure_ascii=False, default=str)


def _refusal(code: str, message: str) -> str:
    return json.dumps({"ok": False, "code": code, "message": message}, ensure_ascii=False)


class ScriptRun:
    """One script's steps on one tab: the checks, the steps, and how the script stopped."""

    def __init__(self, context: ToolContext, tab_id: str) -> None:
        self._context = context
        self._tab_id = tab_id
        self.steps: list[dict[str, Any]] = []
        self.stop: _Stop | None = None
        self.dialog: dict[str, Any] | None = None

    async def host(self, helper: str, payload: str) -> str:
        """Answers one helper call of the script (on the event loop)."""
        if self.stop is not None:
            return _refusal(self.stop.status, f"the script stopped: {self.stop.message}")
        # Every call is a step, a refused one too: a script cannot loop on refusals.
        if len(self.steps) >= MAX_STEPS:
            return self._stopped(_Stop("step_limit", f"a script runs at most {MAX_STEPS} steps"))
        record: dict[str, Any] = {"action": helper, "ok": False}
        self.steps.append(record)
        try:
            step = script_step(helper, json.loads(payload))
        except ToolFailure as failure:
            record["code"] = failure.code
            return _refusal(failure.code, failure.message)
        except RecursionError:
            record["code"] = "invalidArguments"
            return _refusal("invalidArguments", f"the arguments of {helper} are nested too deeply")
        record["action"] = step.action
        try:
            tab = self._checked_tab()
            value = await self._run_step(tab, step)
        except _Stop as stop:
            record["code"] = stop.status
            return self._stopped(stop)
        except CrewhostError as exc:
            record["code"] = exc.code
            status = _STOPPING_CODES.get(exc.code)
            if status is not None:
                return self._stopped(_Stop(status, exc.message))
            return _refusal(exc.code, exc.message)
        except Exception as exc:
            # The message of an unknown failure may quote page data: say what failed, not why.
            log.error("run_script step %s failed with %s", step.action, type(exc).__name__)
            record["code"] = "stepFailed"
            return _refusal("stepFailed", f"the {step.action} step failed unexpectedly")
        record["ok"] = True
        if isinstance(value, dict) and isinstance(value.get("dialog"), dict):
            self.dialog = value["dialog"]
            self.stop = _Stop("dialog", "the page opened a dialog; answer it with handle_dialog")
        text = _answer(value)
        limit = MAX_EVALUATE_BYTES if step.action == "evaluate" else MAX_EVALUATE_BYTES * 4
        if len(text.encode()) > limit:
            record["ok"], record["code"] = False, "valueTooLarge"
            return _refusal("valueTooLarge", f"the step's value is larger than {limit} bytes")
        return text

    def _stopped(self, stop: _Stop) -> str:
        self.stop = stop
        return _refusal(stop.status, stop.message)

    def _checked_tab(self) -> Tab:
        """The tab, checked again before a step: reach, secret, holder, dialog, crash."""
        tab = reachable_tab(self._context, self._tab_id)
        if tab.held_by is not None:
            raise _Stop("user_control", "a person took control of the tab")
        if holds_secret(tab):
            raise _Stop("secret_tab", "the tab is in secure entry; scripts do not touch it")
        if tab.dialog is not None:
            raise _Stop("dialog", "a page dialog is open; answer it with handle_dialog")
        if tab.crashed:
            raise _Stop("page_crashed", "the page stopped working")
        return tab

    async def _run_step(self, tab: Tab, step: ScriptStep) -> Any:
        if step.sleep_ms is not None:
            await asyncio.sleep(step.sleep_ms / 1000)
            return None
        if step.function is not None:
            return await self._watched(tab, self._poll(tab, step.function, step.args["timeout"]))
        tool = _TOOLS[step.action]
        raw = {**step.args, "tabId": self._tab_id}
        try:
            args = tool.args.model_validate(repair_arguments(tool.name, raw))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)[:4]
            )
            raise ToolFailure("invalidArguments", f"{step.action}: {problems}") from None
        result = await self._watched(tab, tool.run(self._context, args))
        if step.action == "evaluate":
            return result.get("value")
        return result

    async def _poll(self, tab: Tab, source: str, timeout_ms: int) -> Any:
        """A page function polled every 100 ms until it gives a truthy value: one step."""

        async def wait(page: Page) -> Any:
            try:
                # A function given as the expression is called by Playwright, each poll.
                handle = await page.wait_for_function(source, polling=_POLL_MS, timeout=timeout_ms)
                return await handle.json_value()
            except PlaywrightError as exc:
                if "Timeout" in str(exc):
                    raise ToolFailure(
                        "waitTimeout", f"the condition did not hold within {timeout_ms} ms"
                    ) from None
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else "it failed"
                raise ToolFailure("scriptError", first[:300]) from None

        done = await self._context.engine.run(
            self._context.team_id,
            tab.id,
            self._context.caller,
            wait,
            deadline=timeout_ms / 1000 + 2,
        )
        return done.value

    async def _watched(self, tab: Tab, work: Any) -> Any:
        """Runs a step, stopping it at once when the tab's page crashes meanwhile."""
        page = tab.page
        if page is None:
            return await work
        crashed = asyncio.Event()

        def on_crash(_page: Page) -> None:
            crashed.set()

        page.on("crash", on_crash)
        step = asyncio.ensure_future(work)
        crash = asyncio.ensure_future(crashed.wait())
        try:
            await asyncio.wait({step, crash}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            page.remove_listener("crash", on_crash)
            crash.cancel()
        if not step.done() or (crashed.is_set() and step.exception() is not None):
            step.cancel()
            raise _Stop("page_crashed", "the page stopped working during the step")
        return step.result()


def _script_result(outcome: SandboxOutcome, run: ScriptRun) -> dict[str, Any]:
    status = run.stop.status if run.stop is not None else outcome.status
    result: dict[str, Any] = {"status": status, "stepsRun": len(run.steps)}
    if outcome.status == "ok" or outcome.value_json != "null":
        if len(outcome.value_json.encode()) > MAX_VALUE_BYTES:
            result["valueError"] = f"the script's value is larger than {MAX_VALUE_BYTES} bytes"
        else:
            try:
                result["value"] = outcome.value
            except RecursionError:
                # The sandbox's thread parsed it; this thread's stack is deeper.
                result["valueError"] = "the script's value is nested too deeply"
    if run.stop is not None:
        result["message"] = run.stop.message
    elif outcome.message:
        result["message"] = outcome.message
    if outcome.error_code:
        result["errorCode"] = outcome.error_code
    if outcome.log:
        result["log"] = outcome.log
    failed = [dict(step, index=n) for n, step in enumerate(run.steps) if not step["ok"]]
    if failed:
        result["failedSteps"] = failed[-5:]
    if run.dialog is not None:
        result["dialog"] = run.dialog
    return result


async def _final_snapshot(context: ToolContext, tab_id: str, result: dict[str, Any]) -> None:
    """The page after the script, or its address when it cannot be read."""
    tab: Tab | None = None
    try:
        tab = reachable_tab(context, tab_id)
        if result["status"] in ("user_control", "secret_tab", "dialog"):
            result["url"] = shown_tab_url(tab)
            return
        result["snapshot"] = await take_snapshot(context, tab)
    except CrewhostError as exc:
        result["snapshotError"] = exc.message
        if tab is not None:
            result["url"] = shown_tab_url(tab)
            if exc.code == "tabHeldByPerson":
                result["status"] = "user_control"


async def run_script(context: ToolContext, args: RunScriptArgs) -> dict[str, Any]:
    reachable_tab(context, args.tab_id)
    run = ScriptRun(context, args.tab_id)
    outcome = await run_in_sandbox(
        args.script,
        helpers=HELPERS,
        host=run.host,
        limits=SandboxLimits(deadline=args.timeout_ms / 1000),
    )
    result = _script_result(outcome, run)
    await _final_snapshot(context, args.tab_id, result)
    return result


async def describe(context: ToolContext, args: RunScriptArgs) -> str:
    return f"Run a script{on_page(context, args.tab_id)}: {script_summary(args.script)}"


TOOL = Tool(
    name="run_script",
    description=(
        "Run many steps on one tab in one call, from JavaScript that runs in a sandbox (not "
        "in the page: no document or window; read the page with evaluate). The script is the "
        "body of an async function; await the helpers navigate(url), click(target), "
        "type(target, text, {mode}), press(key, target?), hover(target), scroll(direction, "
        "pixels), selectOption(target, value), setChecked(target, checked), evaluate(expr or "
        "fn, arg) (its JSON value, up to 1 MB, undefined gives null), snapshot(), "
        "waitFor(...) (a page function polled every 100 ms, ('text', 'x'), {selector}, "
        "(cond, 5000), {state: 'load'|'networkidle'}, role('button', {name})), sleep(ms) "
        "(at most 25 s) and step({action, ...fields}). A target is a ref, a snapshot line, "
        "'css <selector>' or a selector. A failed step throws StepError (name, code, "
        "message). At most 200 steps; return a JSON value (at most 64 KB); console.log "
        "lines come back as log. timeoutMs (default 60000, at most 120000) bounds the "
        "whole script. The result has status ok, error, timeout, memory_limit, "
        "stack_limit, step_limit, user_control (a person took the tab), dialog, "
        "page_crashed, secret_tab or tab_closed, the value, and one final snapshot (or the "
        "tab's url when there is none)."
    ),
    args=RunScriptArgs,
    gated=True,
    run=run_script,
    describe=describe,
)
