"""Talking to an agent from a terminal: send a message, follow its turn, answer its questions.

A turn is followed through the events of the ``team-api`` channel: the agent's text
as it streams, one line per tool call, a y/N question for each gated call, and the
turn's status at its end. Ctrl+C stops the running turn through ``threads-v1/stop``.

A message sent while the thread's turn runs (another member's, or one started elsewhere)
is queued by the host: the chat says so, follows the turn that takes it, and Ctrl+C
before then takes the message back (``threads-v1/queue-cancel``).

A reply that broke off and is asked for again cannot be taken back from a terminal:
its text stays, a line says the reply starts again (and why), and the new text follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from typing import Any, TextIO

from peer.connection import HostConnection, TeamApiCallError

# Answers to a consent question that approve it; anything else denies.
YES = ("y", "yes")
# How long a stopped turn may take to report its end before the chat gives up on it.
STOP_WAIT_SECONDS = 15.0


class AgentNotFound(Exception):
    """No agent of the team has the name or id the person gave."""

    code = "agentNotFound"


class StdinLines:
    """Lines of a text stream, read by a daemon thread so that a read still waiting for
    a line never keeps the process from exiting; None once the stream ends."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._thread: threading.Thread | None = None
        self._ended = False

    async def next(self) -> str | None:
        """The next line without its line end, or None at the end of the stream."""
        if self._ended:
            return None
        if self._thread is None:
            loop = asyncio.get_running_loop()
            self._thread = threading.Thread(
                target=self._read, args=(loop,), name="stdin-lines", daemon=True
            )
            self._thread.start()
        line = await self._lines.get()
        if line is None:
            self._ended = True
            return None
        return line.rstrip("\r\n")

    def _read(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            line = self._stream.readline()
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(self._lines.put_nowait, line or None)
            if not line:
                return


async def find_agent(connection: HostConnection, wanted: str) -> dict[str, Any]:
    """The team's agent whose id is ``wanted``, or the one whose name is (any case)."""
    agents: list[dict[str, Any]] = (await connection.call("agents-v1/list"))["agents"]
    for agent in agents:
        if agent["id"] == wanted:
            return agent
    named = [a for a in agents if a["name"].casefold() == wanted.strip().casefold()]
    if len(named) > 1:
        raise AgentNotFound(f'{len(named)} agents are named "{wanted}"; give the id of one')
    if not named:
        raise AgentNotFound(
            f'no agent is named "{wanted}" or has that id; `crewhost-peer agents` lists them'
        )
    return named[0]


class _Interrupted(Exception):
    """The person pressed Ctrl+C."""


class TerminalChat:
    """One thread with an agent, followed on a terminal.

    The agent's text, one line per tool call and each turn's status go to ``out``;
    the thread's id, questions and notes go to ``err``; messages and answers are
    lines of ``lines``.
    """

    def __init__(
        self,
        connection: HostConnection,
        thread_id: str,
        lines: StdinLines,
        *,
        out: TextIO,
        err: TextIO,
        interactive: bool,
    ) -> None:
        self._connection = connection
        self._thread_id = thread_id
        self._lines = lines
        self._out = out
        self._err = err
        self._interactive = interactive
        self._interrupted = asyncio.Event()
        self._mid_line = False
        # The running turn: its id, what each call acts on, the questions asked and those
        # still waiting for the person's line.
        self._turn_id = ""
        # The message waiting in the thread's queue, until a turn takes it.
        self._queued_id: str | None = None
        self._calls: dict[str, str] = {}
        self._questions: dict[str, asyncio.Task[None]] = {}
        self._asking: set[str] = set()

    async def run(self, message: str | None) -> int:
        """Send ``message`` and follow its turn; without one, each line of input in turn.
        0 when the (last) turn ended ``done``, else 1."""
        loop = asyncio.get_running_loop()
        # Without signal handlers (Windows), Ctrl+C ends the process as it always does.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self._interrupted.set)
        try:
            if message is not None:
                return await self.turn(message)
            return await self._conversation()
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)

    async def _conversation(self) -> int:
        code = 0
        while not self._interrupted.is_set():
            if self._interactive:
                self._note("> ", end="")
            try:
                line = await self._until_interrupted(self._lines.next())
            except _Interrupted:
                break
            if line is None:
                break
            if line.strip():
                code = await self.turn(line)
        return code

    async def turn(self, text: str) -> int:
        """Send ``text`` and print the turn it starts until it ends; 0 when it is done."""
        started = await self._connection.call(
            "threads-v1/send", {"threadId": self._thread_id, "text": text}
        )
        if started["turnId"] is None:
            self._turn_id, self._queued_id = "", str(started["queued"]["id"])
            self._note("(queued: the agent is still answering; your message starts its next turn)")
        else:
            self._turn_id, self._queued_id = str(started["turnId"]), None
        try:
            while True:
                try:
                    event = await self._until_interrupted(self._next_event())
                except _Interrupted:
                    if self._queued_id is not None:
                        return await self._take_back()
                    return await self._stop()
                finished = self._show(event)
                if finished is not None:
                    # Shown here in full: the thread holds nothing unread for this member.
                    with contextlib.suppress(TeamApiCallError):
                        await self._connection.call(
                            "threads-v1/mark-read", {"threadId": self._thread_id}
                        )
                    return finished
        finally:
            for question in self._questions.values():
                question.cancel()
            self._questions.clear()
            self._calls.clear()

    def _show(self, message: dict[str, Any]) -> int | None:
        """Print one event of the turn; the exit code once it is the turn's end.

        Each field is read for what it should be, so that an event of another release (a
        field missing or of another type) shows what it can or nothing, never stops the chat.
        """
        name, data = message.get("event"), message.get("data")
        if not isinstance(data, dict) or data.get("threadId") != self._thread_id:
            return None
        event_id = _text(data, "id")
        if name == "attention-requested" and data.get("kind") == "consent" and event_id:
            description = _text(data, "description")
            summary = _text(data, "summary") or "a call"
            call_id = _text(data, "callId")
            if call_id:
                self._calls[call_id] = description or summary
            self._questions[event_id] = asyncio.ensure_future(
                self._ask(event_id, description, summary)
            )
        elif name == "attention-resolved" and event_id in self._asking:
            self._questions.pop(event_id).cancel()
            self._asking.discard(event_id)
            self._note(f"(the question was {_text(data, 'outcome') or 'answered'} elsewhere)")
        if self._queued_id is not None and event_id == self._queued_id:
            taken_by = _text(data, "turnId")
            if name == "queued-message-taken" and taken_by:
                self._turn_id, self._queued_id = taken_by, None
            elif name == "queued-message-cancelled":
                self._line("(the queued message was taken back)")
                return 1
        if data.get("turnId") != self._turn_id:
            return None
        if name == "turn-text":
            self._write(_text(data, "text"))
        elif name == "turn-waiting":
            ahead = data.get("ahead")
            before = (
                f"; {ahead} of the team's turns before it"
                if isinstance(ahead, int) and not isinstance(ahead, bool) and ahead > 0
                else ""
            )
            self._line(f"(waiting: the team runs as many turns as the host allows{before})")
        elif name == "turn-running":
            self._line("(running)")
        elif name == "turn-text-reset":
            reason = _text(data, "reason")
            self._line(f"(the reply broke off and starts again{f': {reason}' if reason else ''})")
        elif name == "tool-call-started":
            call_id = _text(data, "callId")
            if call_id:
                self._calls[call_id] = _text(data, "description") or _call_name(data)
        elif name == "tool-call-finished":
            target = self._calls.get(_text(data, "callId")) or _text(data, "tool") or "a call"
            outcome = _text(data, "outcome") or "finished"
            summary = _text(data, "summary")
            if summary and summary != outcome:
                outcome += f" ({summary})"
            self._line(f"· {target} -> {outcome}")
        elif name == "turn-finished":
            status = _text(data, "status") or "ended"
            reason = _text(data, "reason")
            self._line(f"turn {status}{f': {reason}' if reason else ''}")
            return 0 if status == "done" else 1
        return None

    async def _ask(self, question_id: str, description: str, summary: str) -> None:
        """Ask the person about one gated call and send the answer."""
        self._end_line()
        if description:
            # What will happen, in the host's words; the raw call below it for the details.
            self._note(description)
            self._note(f"  details: {summary}")
            self._note("allow? [y/N] ", end="")
        else:
            self._note(f"allow {summary}? [y/N] ", end="")
        self._asking.add(question_id)
        try:
            line = await self._lines.next()
        finally:
            self._asking.discard(question_id)
        if line is None:
            self._note("")
        approve = line is not None and line.strip().casefold() in YES
        try:
            await self._connection.call(
                "attention-v1/answer", {"id": question_id, "approve": approve}
            )
        except TeamApiCallError as exc:
            self._note(f"(the answer was not taken: {exc.message})")

    async def _take_back(self) -> int:
        """Ctrl+C while the message waits in the queue: take it back (unless a turn took
        it meanwhile, which then goes on)."""
        self._end_line()
        try:
            await self._connection.call(
                "threads-v1/queue-cancel", {"threadId": self._thread_id, "id": self._queued_id}
            )
        except TeamApiCallError as exc:
            self._note(f"(the message was not taken back: {exc.message})")
            return 1
        self._note("(the queued message was taken back)")
        return 1

    async def _stop(self) -> int:
        """Stop the running turn and wait (a while) for its end; its exit code."""
        self._end_line()
        self._note("stopping the turn…")
        await self._connection.call("threads-v1/stop", {"threadId": self._thread_id})
        try:
            async with asyncio.timeout(STOP_WAIT_SECONDS):
                while (code := self._show(await self._next_event())) is None:
                    pass
        except TimeoutError:
            self._note("(the host did not report the turn's end)")
            return 1
        return code

    async def _next_event(self) -> dict[str, Any]:
        """The next event of the connection; ConnectionError once it closed."""
        connection = self._connection
        if not connection.events.empty():
            return connection.events.get_nowait()
        getting = asyncio.ensure_future(connection.events.get())
        closing = asyncio.ensure_future(connection.closed.wait())
        try:
            await asyncio.wait((getting, closing), return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
            if not getting.done():
                getting.cancel()
        if getting.done() and not getting.cancelled():
            return getting.result()
        raise ConnectionError("the connection to the host closed")

    async def _until_interrupted(self, waited: Any) -> Any:
        """What ``waited`` answers, unless Ctrl+C comes first (``_Interrupted``)."""
        task = asyncio.ensure_future(waited)
        interrupt = asyncio.ensure_future(self._interrupted.wait())
        try:
            await asyncio.wait((task, interrupt), return_when=asyncio.FIRST_COMPLETED)
        finally:
            interrupt.cancel()
            if not task.done():
                task.cancel()
        if task.done() and not task.cancelled():
            return task.result()
        raise _Interrupted

    # -- output -------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._out.flush()
            self._mid_line = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._mid_line:
            self._write("\n")

    def _line(self, text: str) -> None:
        self._end_line()
        self._write(text + "\n")

    def _note(self, text: str, *, end: str = "\n") -> None:
        self._err.write(text + end)
        self._err.flush()


def _text(data: dict[str, Any], key: str) -> str:
    """The event's field ``key`` when it is text, else ""."""
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _call_name(data: dict[str, Any]) -> str:
    """A tool call as its event names it: the tool and what it acts on, or "a call"."""
    return " ".join(part for part in (_text(data, "tool"), _text(data, "summary")) if part) or (
        "a call"
    )
