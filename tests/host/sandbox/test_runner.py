"""The sandbox: what a script cannot reach, the limits that end it, and the loop it spares.

Every test here runs under the suite's event-loop watchdog (tests/conftest.py), which
fails a test whose loop stopped answering: a runaway script must not block it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Awaitable

import pytest
import quickjs_rs

from server.host.sandbox.runner import (
    MAX_HELPER_ARGS,
    SandboxLimits,
    SandboxOutcome,
    SandboxSlots,
    run_in_sandbox,
    warm_up,
)
from tests.support.loop_watch import watch_event_loop

SHORT = SandboxLimits(deadline=1.5)
# For scripts that end by a limit other than time: the deadline only backs it up, far
# enough away that a loaded machine still reaches the limit first.
ROOMY = SandboxLimits(deadline=30)


@pytest.fixture(scope="module", autouse=True)
def compiled_engine() -> None:
    warm_up()


async def _echo(name: str, payload: str) -> str:
    await asyncio.sleep(0)
    return json.dumps({"ok": True, "value": {"helper": name, "args": json.loads(payload)}})


async def run(source: str, limits: SandboxLimits = SHORT) -> SandboxOutcome:
    return await run_in_sandbox(source, helpers=["echo"], host=_echo, limits=limits)


class Heartbeat:
    """A coroutine beside the script that counts its beats: the loop kept running."""

    def __init__(self) -> None:
        self.beats = 0

    async def beat(self) -> None:
        while True:
            self.beats += 1
            await asyncio.sleep(0.01)


@pytest.fixture
async def heartbeat() -> AsyncIterator[Heartbeat]:
    beating = Heartbeat()
    task = asyncio.create_task(beating.beat())
    yield beating
    task.cancel()


async def test_a_script_returns_json_and_its_log() -> None:
    outcome = await run("console.log('seen', {n: 1}); return {sum: 1 + 2, gone: undefined}")
    assert outcome.status == "ok"
    assert outcome.value == {"sum": 3}
    assert outcome.log == ['seen {"n":1}']


async def test_undefined_is_null() -> None:
    assert (await run("const x = 1;")).value is None


async def test_a_helper_crosses_to_the_event_loop_and_back() -> None:
    outcome = await run("return await echo(1, 'two', {three: [3]})")
    assert outcome.value == {"helper": "echo", "args": [1, "two", {"three": [3]}]}


async def test_a_failed_helper_throws_a_step_error_the_script_can_catch() -> None:
    async def refuse(name: str, payload: str) -> str:
        return json.dumps({"ok": False, "code": "targetNotFound", "message": "nothing there"})

    outcome = await run_in_sandbox(
        "try { await click('#x') } catch (e) { return [e.name, e.code, e.message] }",
        helpers=["click"],
        host=refuse,
        limits=SHORT,
    )
    assert outcome.value == ["StepError", "targetNotFound", "nothing there"]


async def test_helper_arguments_over_the_cap_are_refused_before_they_cross() -> None:
    crossed: list[int] = []

    async def record(name: str, payload: str) -> str:
        crossed.append(len(payload))
        return json.dumps({"ok": True, "value": len(payload)})

    # A small value in the script, 7,000 references to one array, is 21 MB as JSON;
    # the long string, one million characters and its brackets and quotes, crosses.
    outcome = await run_in_sandbox(
        """
        const inner = new Array(1000).fill(0).map(() => ({}));
        const outer = new Array(7000).fill(inner);
        let refused;
        try { await echo(outer) } catch (e) { refused = [e.name, e.code, e.message] }
        return [refused, await echo("x".repeat(1000000))]
        """,
        helpers=["echo"],
        host=record,
        limits=ROOMY,
    )
    assert outcome.value == [
        [
            "StepError",
            "argumentsTooLarge",
            f"the arguments of echo are longer than {MAX_HELPER_ARGS} characters as JSON",
        ],
        1_000_004,
    ]
    assert crossed == [1_000_004]


async def test_a_value_nested_too_deeply_is_a_clear_error() -> None:
    outcome = await run('return JSON.parse("[".repeat(1100) + "]".repeat(1100))')
    assert (outcome.status, outcome.message) == ("error", "the script's value is nested too deeply")


@pytest.mark.parametrize(
    "name",
    [
        "fetch",
        "require",
        "process",
        "WebAssembly",
        "setTimeout",
        "setInterval",
        "XMLHttpRequest",
        "Deno",
        "Bun",
        "importScripts",
        "__crewhostHost",
        "std",
        "os",
    ],
)
async def test_nothing_outside_reaches_in(name: str) -> None:
    outcome = await run(f"return typeof globalThis[{name!r}]")
    assert outcome.value == "undefined"


async def test_function_return_this_is_the_same_bare_global() -> None:
    outcome = await run(
        "const g = Function('return this')();"
        "return [g === globalThis, typeof g.fetch, typeof g.process, typeof g.require,"
        " Object.keys(g).filter(k => k !== 'performance')]"
    )
    assert outcome.value == [True, "undefined", "undefined", "undefined", []]


async def test_constructor_chains_reach_nothing_either() -> None:
    outcome = await run(
        "const F = (async () => {}).constructor; const f = new F('return typeof process');"
        "return [await f(), (() => {}).constructor.constructor('return typeof fetch')()]"
    )
    assert outcome.value == ["undefined", "undefined"]


async def test_no_module_can_be_imported() -> None:
    outcome = await run("const m = await import('fs'); return typeof m")
    assert outcome.status == "error"


async def test_the_helpers_cannot_be_replaced() -> None:
    outcome = await run("try { globalThis.echo = () => 1 } catch (e) {} ; return await echo(5)")
    assert outcome.value == {"helper": "echo", "args": [5]}


async def test_a_page_global_says_the_script_is_in_a_sandbox() -> None:
    outcome = await run("return document.title")
    assert outcome.status == "error"
    assert "sandbox" in (outcome.message or "")
    assert "evaluate" in (outcome.message or "")


async def test_a_thrown_error_is_the_status_error() -> None:
    outcome = await run("throw new TypeError('bad thing')")
    assert (outcome.status, outcome.message) == ("error", "TypeError: bad thing")


async def test_a_promise_nothing_settles_ends_the_script() -> None:
    outcome = await run("await new Promise(() => {})")
    assert outcome.status == "error"


async def _watched(body: Awaitable[object]) -> None:
    watch = watch_event_loop()
    await anext(watch)
    await asyncio.sleep(0.05)  # the watch's heartbeat has beaten once
    await body
    with pytest.raises(StopAsyncIteration):
        await anext(watch)


async def _waited_for_on_the_loop(source: str) -> None:
    """The same engine in a thread that the event loop waits for, as the sandbox never does."""

    def work() -> None:
        with (
            quickjs_rs.Runtime() as runtime,
            runtime.new_context(timeout=1.5) as context,
            contextlib.suppress(quickjs_rs.TimeoutError),
        ):
            context.eval(source)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()


@pytest.mark.allow_blocking
async def test_the_watchdog_would_catch_a_loop_that_waits_for_the_script() -> None:
    # What the tests below rely on: waiting for a runaway script on the loop fails the watch.
    with pytest.raises(AssertionError, match="event loop was blocked"):
        await _watched(_waited_for_on_the_loop("while (true) {}"))


async def test_a_runaway_script_in_the_sandbox_passes_the_watch() -> None:
    await _watched(run("while (true) {}"))


async def test_an_infinite_loop_ends_at_the_deadline(heartbeat: Heartbeat) -> None:
    outcome = await run("while (true) {}")
    assert outcome.status == "timeout"
    assert heartbeat.beats > 1


async def test_a_loop_after_a_helper_ends_at_the_deadline(heartbeat: Heartbeat) -> None:
    outcome = await run("await echo(1); for (;;) { Math.sqrt(2) }")
    assert outcome.status == "timeout", outcome
    assert heartbeat.beats > 1


async def test_the_deadline_counts_time_spent_in_helpers() -> None:
    async def slow(name: str, payload: str) -> str:
        await asyncio.sleep(5)
        return json.dumps({"ok": True, "value": None})

    outcome = await run_in_sandbox(
        "while (true) { await wait() }", helpers=["wait"], host=slow, limits=SHORT
    )
    assert outcome.status == "timeout"


async def test_a_memory_bomb_ends_with_a_clear_status(heartbeat: Heartbeat) -> None:
    outcome = await run(
        "const a = []; while (true) a.push(new Array(100000).fill(a.length))", ROOMY
    )
    assert outcome.status == "memory_limit"
    assert heartbeat.beats > 1


async def test_one_large_allocation_hits_the_memory_limit() -> None:
    outcome = await run("const big = new Uint8Array(100 * 1024 * 1024); return big.length", ROOMY)
    assert outcome.status == "memory_limit"


async def test_array_buffers_count_towards_the_memory_limit(heartbeat: Heartbeat) -> None:
    outcome = await run("const a = []; while (true) a.push(new Uint8Array(1 << 20)); ", ROOMY)
    assert outcome.status == "memory_limit"


async def test_a_script_may_use_memory_below_the_limit() -> None:
    outcome = await run(
        "const a = []; for (let i = 0; i < 40; i++) a.push(new Uint8Array(1 << 20));"
        " return a.length"
    )
    assert outcome.value == 40


async def test_deep_recursion_ends_with_the_stack_limit(heartbeat: Heartbeat) -> None:
    outcome = await run("function down(n) { return down(n + 1) + 1 } return down(0)", ROOMY)
    assert outcome.status == "stack_limit"


async def test_a_one_megabyte_string_loop_ends_with_a_clear_status(heartbeat: Heartbeat) -> None:
    outcome = await run("const s = 'x'.repeat(1 << 20); let t = ''; while (true) t += s")
    assert outcome.status in ("memory_limit", "timeout")
    assert heartbeat.beats > 0


async def test_a_log_of_a_circular_value_still_logs() -> None:
    outcome = await run("const a = {}; a.self = a; console.log('loop', a); return 1")
    assert outcome.log == ["loop [object Object]"]


FORGED_LOG = "Array.from({ length: 1000 }, (_, i) => 'line ' + i)"


async def test_replacing_json_changes_neither_the_value_nor_the_log_cap() -> None:
    real = "const real = JSON.stringify;"
    forged = f"() => real({{ value: '42', error: null, log: {FORGED_LOG} }})"
    outcome = await run(
        f"{real} JSON.stringify = {forged}; JSON.parse = () => null;"
        " for (let i = 0; i < 1000; i++) console.log('line', i); return {n: 1}"
    )
    assert (outcome.status, outcome.value) == ("ok", {"n": 1})
    assert outcome.log == [f"line {i}" for i in range(200)]


@pytest.mark.parametrize(
    "escape",
    [
        # Out of the function the script is the body of, with a result of its own.
        "})(); } catch (e) {}"
        f" return JSON.stringify({{ value: '42', error: null, log: {FORGED_LOG} }});"
        " try { await (async () => {",
        f"}})(); ({{ value: '42', log: {FORGED_LOG} }}); (async () => {{",
    ],
    ids=["wrapper-of-old", "closed-function"],
)
async def test_a_script_that_closes_its_function_shapes_no_result(escape: str) -> None:
    outcome = await run(f"for (let i = 0; i < 1000; i++) console.log('line', i); {escape}")
    assert outcome.value != 42
    assert len(outcome.log) <= 200
    assert all(line.startswith("line ") for line in outcome.log)


async def test_logging_more_than_the_cap_keeps_the_first_lines_cut_short() -> None:
    outcome = await run(
        "for (let i = 0; i < 300; i++) console.log(String(i).repeat(3000)); return 1"
    )
    assert len(outcome.log) == 200
    assert outcome.log[0] == "0" * 2000
    assert outcome.log[-1] == ("199" * 1000)[:2000]


async def test_a_long_finite_chain_of_microtasks_completes() -> None:
    # QuickJS runs at most 100,000 jobs per drain; the chain is longer than one.
    outcome = await run(
        "let n = 0; for (let i = 0; i < 250000; i++) { await null; n++ } return n",
        ROOMY,
    )
    assert (outcome.status, outcome.value) == ("ok", 250000)


async def test_an_endless_chain_of_microtasks_ends_at_the_deadline(heartbeat: Heartbeat) -> None:
    outcome = await run("for (;;) await null")
    assert (outcome.status, outcome.message) == (
        "timeout",
        "the script ran longer than its 1.5 s deadline",
    )
    assert heartbeat.beats > 0


async def test_stopping_cancels_the_helper_call_under_way() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def slow(name: str, payload: str) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return json.dumps({"ok": True, "value": None})

    outcome = await run_in_sandbox(
        "await wait()", helpers=["wait"], host=slow, limits=SandboxLimits(deadline=0.5)
    )
    assert outcome.status == "timeout"
    await cancelled.wait()
    assert started.is_set()


async def test_each_script_has_a_fresh_runtime() -> None:
    await run("globalThis.left = 'behind'")
    assert (await run("return typeof globalThis.left")).value == "undefined"


async def test_cancelling_the_call_stops_the_script() -> None:
    task = asyncio.create_task(run("while (true) {}", SandboxLimits(deadline=30)))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_replacing_string_breaks_neither_helpers_nor_the_log() -> None:
    outcome = await run("globalThis.String = () => ({}); console.log({a: 1}); return await echo(2)")
    assert outcome.status == "ok"
    assert outcome.value == {"helper": "echo", "args": [2]}
    assert outcome.log == ['{"a":1}']


async def test_a_value_that_is_not_json_is_an_error_whoever_holds_json() -> None:
    for source in ("return 10n", "const a = {}; a.a = a; return a"):
        outcome = await run(source)
        assert (outcome.status, outcome.message) == (
            "error",
            "TypeError: the script returned a value that is not JSON",
        )


async def test_scripts_past_the_hosts_places_wait_for_one_within_their_deadline() -> None:
    slots = SandboxSlots(1)
    holding, go = asyncio.Event(), asyncio.Event()

    async def hold(name: str, payload: str) -> str:
        holding.set()
        await go.wait()
        return json.dumps({"ok": True, "value": "done"})

    first = asyncio.create_task(
        run_in_sandbox(
            "return await hold()", helpers=["hold"], host=hold, limits=ROOMY, slots=slots
        )
    )
    await holding.wait()
    # The one place is taken: a script past it waits, and its deadline ends the wait.
    waited = await run_in_sandbox("return 1", limits=SandboxLimits(deadline=0.3), slots=slots)
    assert waited.status == "timeout"
    assert "did not start" in (waited.message or "")
    queued = asyncio.create_task(run_in_sandbox("return 2", limits=ROOMY, slots=slots))
    go.set()
    assert (await first).value == "done"
    assert (await queued).value == 2  # it ran once the first gave its place back
