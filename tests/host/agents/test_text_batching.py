"""How a turn's text goes out: the first delta at once, later ones batched into one event."""

from __future__ import annotations

import asyncio

from server.common.protocol import events
from server.host.agents.providers.transcript import ToolCall
from server.host.agents.threads import RunningTurn, _Sink
from server.host.agents.turn_loop import CallCard
from server.host.storage.threads import Thread, Turn

THREAD = Thread("t" * 32, "team", "a" * 32, "account", False, "", 0.0, 0.0)
TURN = Turn("u" * 32, "team", THREAD.id, "running", None, 0, 0, 0, 0.0, None)


class Emitted:
    """Stands in for the thread service: keeps what the sink sends, in order."""

    def __init__(self) -> None:
        self.sent: list[events.HostEvent] = []
        self.more = asyncio.Event()

    def emit(self, thread: Thread, event: events.HostEvent) -> None:
        assert thread is THREAD
        self.sent.append(event)
        self.more.set()

    def texts(self) -> list[str]:
        return [e.text for e in self.sent if isinstance(e, events.TextDelta)]


def sink() -> tuple[_Sink, Emitted]:
    emitted = Emitted()
    return _Sink(emitted, RunningTurn(TURN, THREAD)), emitted  # type: ignore[arg-type]


async def test_the_first_delta_goes_at_once_and_later_ones_are_batched() -> None:
    text, emitted = sink()

    text.text("Hel")
    assert emitted.texts() == ["Hel"]  # before the loop ran anything else

    emitted.more.clear()
    text.text("lo, ")
    text.text("world")
    assert emitted.texts() == ["Hel"]
    await emitted.more.wait()  # the window's end
    assert emitted.texts() == ["Hel", "lo, world"]
    text.flush()


async def test_text_said_before_a_tool_call_goes_out_before_its_card() -> None:
    text, emitted = sink()
    call = ToolCall(id="toolu_1", name="list_tabs")
    text.text("Looking.")
    text.text(" Now.")

    text.tool_started(call, "{}", CallCard())
    text.tool_finished(call, "ok", "ok", CallCard())

    assert [type(e).__name__ for e in emitted.sent] == [
        "TextDelta",
        "TextDelta",
        "ToolCallStarted",
        "ToolCallFinished",
    ]
    assert emitted.texts() == ["Looking.", " Now."]
    text.flush()  # nothing waits: the window stops


async def test_a_turn_that_ends_sends_what_waits() -> None:
    text, emitted = sink()
    text.text("a")
    text.text("b")

    text.flush()

    assert emitted.texts() == ["a", "b"]
    text.flush()
