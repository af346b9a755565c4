"""One turn of the model loop: ask the model, run its tool calls, until it answers in words.

1. The transcript, the system prompt and the tool specs go to the provider; the reply
   streams in (text deltas go to the members as they come).
2. Free tools run at once; a gated tool runs only after a member's consent, unless the
   agent's permissions auto-approve its family. A denial ends the turn ``denied`` and
   nothing of that call runs.
3. Results go back to the model, and the loop goes on until a reply has no tool call.
4. Before each model request the turn's meter checks its budgets (the last request's input
   as the estimate): a spent one ends the turn ``budget`` (after the request before it
   finished); each request is recorded with its tokens, latency and outcome.
5. After the cap on tool calls the turn ends ``capped``; a provider failure ends it
   ``error`` with a readable reason, never an exception. A reply cut at its token limit
   (inside a tool call, or in its text) ends it ``incomplete``, and none of its calls runs.
6. A reply that breaks off after it started streaming is asked for once more; the sink is
   told to drop what the broken one said (``text_reset``).

Whatever ends it, the transcript it leaves is valid for the next turn on either wire
format: every tool call has a result (see ``close_dangling_calls``).

A turn the host put aside as it stopped (waiting for consent to a call) is taken up again
at its next start: the calls of its last reply that had not run (``pending_calls``) run
first, the one that waited for consent first of all, and the loop goes on from there.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from server.common.errors import CrewhostError
from server.common.protocol.events import TurnStatus
from server.common.wire import shown_line, shown_text
from server.host.agents.permissions import auto_approved
from server.host.agents.providers.errors import TURN_ERROR_CODES
from server.host.agents.providers.events import StreamTextDelta, Usage
from server.host.agents.providers.stream import (
    ModelProvider,
    ModelReply,
    ModelRequest,
    recorded,
)
from server.host.agents.providers.transcript import (
    AssistantMessage,
    ToolAnswer,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
    close_dangling_calls,
)
from server.host.tools.catalog import CATALOG, call_tool, describe_call
from server.host.tools.context import ToolContext
from server.host.tools.page.approval import Approval
from server.host.tools.repair import repair_arguments
from server.host.tools.results import ToolFailure, serialize_result

ToolOutcome = Literal["ok", "refused", "error"]
Message = UserMessage | AssistantMessage | ToolResult

DEFAULT_MAX_TOOL_CALLS = 12
# A reply that broke off after it had started streaming is asked for again this often.
STARTED_RETRIES = 1
NOT_RUN = "not run: the turn ended before this call"
DENIED = "The person denied this call. Nothing was done. Do not try it another way."


class TurnSink(Protocol):
    """Where a turn reports as it goes: to the members who see the thread."""

    def text(self, delta: str) -> None: ...

    def text_reset(self, reason: str) -> None:
        """The reply being streamed broke off (``reason``) and is asked for again: what it
        said so far is not part of the turn."""
        ...

    def tool_started(self, call: ToolCall, summary: str, card: CallCard) -> None: ...

    def tool_finished(
        self, call: ToolCall, outcome: ToolOutcome, summary: str, card: CallCard
    ) -> None: ...


@dataclass(frozen=True)
class CallCard:
    """What a member's card of a call shows beside the call: the host's description of a
    gated call, and the tab it works in (its title once the call ended)."""

    description: str | None = None
    tab_id: str | None = None
    tab_title: str | None = None


# Asks a member to let one gated call run, shown with its description; True to run it.
Consent = Callable[[ToolCall, str | None], Awaitable[bool]]


class RequestMeter(Protocol):
    """What counts a turn's model requests: the budgets before each, the record after."""

    async def before_request(self, estimated_input: int) -> None:
        """Raise a ``CrewhostError`` (``budgetExceeded``) when a budget is spent."""
        ...

    async def requested(self, usage: Usage, seconds: float, *, ok: bool) -> None: ...


class TurnTools(Protocol):
    """Tools of one turn beside the catalog (an agent's MCP servers' tools)."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    def owns(self, name: str) -> bool: ...

    def asks(self, name: str) -> bool:
        """Whether a person must let the call run."""
        ...

    def describe(self, name: str, arguments: dict[str, Any]) -> str: ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolAnswer: ...


@dataclass
class TurnProgress:
    """What a turn did so far; whoever stops it reads the transcript from here."""

    new_messages: list[Message] = field(default_factory=list)
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    status: TurnStatus | None = None
    reason: str | None = None
    # An error's stable code (``providerKeyMissing``, …), when a person can act on it.
    code: str | None = None
    # Whether the provider answered (None: never asked), and why it last failed.
    provider_answered: bool | None = None
    provider_failure: str | None = None
    # (outcome, seconds) of every provider request, to its last event.
    provider_requests: list[tuple[str, float]] = field(default_factory=list)
    # How many calls the model made (run or not): the number in each call's host id.
    calls_named: int = 0
    # The input tokens of the last model request: the estimate of the next one's.
    last_input_tokens: int = 0
    # A turn taken up again: the calls of the transcript's last reply that had not run.
    pending: tuple[ToolCall, ...] = ()

    @property
    def ended(self) -> bool:
        """Whether the turn has its status (read after a wait: another task may end it)."""
        return self.status is not None

    def end(self, status: TurnStatus, reason: str | None = None, code: str | None = None) -> None:
        if self.status is None:
            self.status, self.reason, self.code = status, reason, code

    def closed_messages(self) -> list[Message]:
        """The new messages with every dangling call answered (the pending ones too), so
        the transcript stays valid."""
        reason = NOT_RUN if self.status != "stopped" else "not run: a member stopped the turn"
        return close_dangling_calls(self._with_pending(), reason)[1 if self.pending else 0 :]

    def unanswered_calls(self) -> list[ToolCall]:
        """The calls of the turn's last reply that have no result yet, in order: the first
        is the one that runs, or waits for consent, now."""
        messages = self._with_pending()
        replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
        if not replies:
            return []
        last = replies[-1]
        answered = {m.call_id for m in messages[last + 1 :] if isinstance(m, ToolResult)}
        reply = messages[last]
        assert isinstance(reply, AssistantMessage)
        return [call for call in reply.tool_calls if call.id not in answered]

    def _with_pending(self) -> list[Message]:
        if not self.pending:
            return self.new_messages
        return [AssistantMessage(tool_calls=self.pending), *self.new_messages]


@dataclass(frozen=True)
class TurnSetup:
    provider: ModelProvider
    model: str
    system: str
    transcript: list[Message]
    context: ToolContext
    permissions: dict[str, str]
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    max_tokens: int = 4096
    # The tools this turn may use (a sub-agent's subset); None: the whole catalog.
    allowed_tools: frozenset[str] | None = None
    # What the host's id of each call of the turn starts with: the turn's id.
    call_id_prefix: str = "turn"
    # Messages members sent meanwhile and marked to steer: read before each model request.
    steer: Callable[[], Awaitable[list[UserMessage]]] | None = None
    # The agent's MCP tools (offered only when the turn has the whole catalog).
    extra_tools: TurnTools | None = None
    # Checks budgets before each model request and records each one (None: not counted).
    meter: RequestMeter | None = None
    # A turn taken up again: the calls of the transcript's last reply that had not run.
    pending_calls: tuple[ToolCall, ...] = ()


@functools.cache
def tool_specs(allowed: frozenset[str] | None = None) -> tuple[ToolSpec, ...]:
    """Every tool of the catalog (or of ``allowed``), as the model reads it: built once (the
    schemas take tens of milliseconds, too long to spend on the host's loop at every turn)."""
    return tuple(
        ToolSpec(name=t.name, description=t.description, input_schema=t.input_schema())
        for t in CATALOG.values()
        if allowed is None or t.name in allowed
    )


async def run_turn(
    setup: TurnSetup, sink: TurnSink, consent: Consent, progress: TurnProgress
) -> TurnProgress:
    """Run the turn to its end; ``progress`` holds the outcome (also when cancelled)."""
    specs = tool_specs(setup.allowed_tools)
    if setup.extra_tools is not None and setup.allowed_tools is None:
        specs = (*specs, *setup.extra_tools.specs())
    progress.pending = setup.pending_calls
    await _run_calls(setup, sink, consent, progress, setup.pending_calls)
    while progress.status is None:
        if setup.steer is not None:
            # After the last reply's results: the model reads them with the members' words.
            progress.new_messages.extend(await setup.steer())
        if not await _within_budget(setup, progress):
            break
        reply = await _ask(setup, specs, sink, progress)
        if reply is None:
            break
        reply = _named_by_host(reply, setup.call_id_prefix, progress)
        if reply.text or reply.tool_calls or not progress.ended:
            # A cut reply that kept nothing leaves no empty message in the transcript.
            progress.new_messages.append(reply)
        if progress.ended:
            break
        if not reply.tool_calls:
            progress.end("done")
            break
        await _run_calls(setup, sink, consent, progress, reply.tool_calls)
    progress.new_messages = progress.closed_messages()
    return progress


async def _run_calls(
    setup: TurnSetup,
    sink: TurnSink,
    consent: Consent,
    progress: TurnProgress,
    calls: tuple[ToolCall, ...],
) -> None:
    """Run a reply's calls in order, until the turn's cap or its end (a denial)."""
    for call in calls:
        if progress.ended:
            break
        if progress.tool_calls >= setup.max_tool_calls:
            progress.end("capped", f"the turn reached its cap of {setup.max_tool_calls} tool calls")
            break
        if not await _run_call(setup, sink, consent, progress, call):
            break


async def _within_budget(setup: TurnSetup, progress: TurnProgress) -> bool:
    """Whether the next model request may go; a spent budget ends the turn ``budget``."""
    if setup.meter is None:
        return True
    try:
        await setup.meter.before_request(progress.last_input_tokens)
    except CrewhostError as exc:
        progress.end("budget", exc.message, exc.code)
        return False
    return True


async def _ask(
    setup: TurnSetup, specs: tuple[ToolSpec, ...], sink: TurnSink, progress: TurnProgress
) -> AssistantMessage | None:
    """One model reply, streamed to the sink; None when the turn ended with an error."""
    for attempt in range(STARTED_RETRIES + 1):
        # A retry is another request: the budgets are checked again before it goes.
        if attempt and not await _within_budget(setup, progress):
            return None
        request = ModelRequest(
            model=setup.model,
            messages=close_dangling_calls([*setup.transcript, *progress.new_messages], NOT_RUN),
            system=setup.system,
            tools=specs,
            max_tokens=setup.max_tokens,
        )
        said = False
        record = functools.partial(_record_request, setup, progress)
        async with recorded(setup.provider.stream(request), record) as stream:
            async for event in stream:
                if isinstance(event, StreamTextDelta):
                    said = True
                    sink.text(event.text)
        reply = stream.reply
        failure = reply.error
        if failure is None:
            progress.provider_answered = True
            cut = _cut_reason(reply, setup.max_tokens)
            if cut is not None:
                progress.end("incomplete", cut)
            return reply.message()
        retryable = failure.started and failure.kind in ("overloaded", "rate_limited", "network")
        if not (retryable and attempt < STARTED_RETRIES):
            progress.provider_answered, progress.provider_failure = False, failure.message
            progress.end("error", failure.message, TURN_ERROR_CODES.get(failure.kind))
            return None
        if said:
            sink.text_reset(failure.message)
    return None  # pragma: no cover - the loop returns on its last attempt


async def _record_request(
    setup: TurnSetup, progress: TurnProgress, used: Usage, seconds: float, *, ok: bool
) -> None:
    """Count one model request in the turn and in the meter: its tokens and its time."""
    progress.provider_requests.append(("ok" if ok else "failed", seconds))
    progress.input_tokens += used.input_tokens
    progress.output_tokens += used.output_tokens
    if used.input_tokens:
        progress.last_input_tokens = used.input_tokens
    if setup.meter is not None:
        await setup.meter.requested(used, seconds, ok=ok)


def _named_by_host(
    reply: AssistantMessage, prefix: str, progress: TurnProgress
) -> AssistantMessage:
    """``reply`` with each call under the host's id (``<prefix>.<n>``), its provider's id
    kept for the wire: providers repeat their ids across turns, the host's never repeat."""
    if not reply.tool_calls:
        return reply
    calls = []
    for call in reply.tool_calls:
        progress.calls_named += 1
        host_id = f"{prefix}.{progress.calls_named}"
        calls.append(call.model_copy(update={"id": host_id, "provider_id": call.id}))
    return reply.model_copy(update={"tool_calls": tuple(calls)})


def _cut_reason(reply: ModelReply, max_tokens: int) -> str | None:
    """Why the turn ends ``incomplete`` when the model's reply was cut at its token limit: in
    the middle of a call (whose arguments are lost, so no call of that reply may run: the
    model meant them together), or in its words; None when nothing was cut."""
    limit = f"the model's reply was cut at its token limit ({max_tokens} tokens)"
    if reply.dropped_calls:
        name = reply.dropped_calls[0].name
        return f"{limit} in the middle of its call of {name}; none of that reply's calls ran"
    if reply.stop_reason == "max_tokens" and not reply.tool_calls:
        return limit
    return None


async def _run_call(
    setup: TurnSetup,
    sink: TurnSink,
    consent: Consent,
    progress: TurnProgress,
    call: ToolCall,
) -> bool:
    """Run one call and keep its result; False when the turn ends here (a denial)."""
    if setup.allowed_tools is not None and call.name not in setup.allowed_tools:
        # Not offered to this turn: answered without running, and counted, so a model that
        # insists cannot loop for ever.
        progress.tool_calls += 1
        message = f"{call.name} is not one of the tools you were given"
        progress.new_messages.append(ToolResult(call_id=call.id, content=message, is_error=True))
        sink.tool_finished(call, "refused", f"toolNotAvailable: {message}", CallCard())
        return True
    extra = setup.extra_tools
    if extra is not None and setup.allowed_tools is None and extra.owns(call.name):
        return await _run_extra_call(extra, sink, consent, progress, call)
    tool = CATALOG.get(call.name)
    asks = tool is not None and tool.gated and not auto_approved(setup.permissions, call.name)
    if asks:
        # The person approves the call as it will run: with the agent's forms repaired.
        call = _repaired(call)
    # What the person approves is the element the card names: the call acts on no other.
    approval = Approval() if asks else None
    description = _shown(await describe_call(setup.context, call.name, call.arguments, approval))
    named_tab = call.arguments.get("tabId")
    card = CallCard(description, named_tab if isinstance(named_tab, str) else None)
    if asks and not await consent(call, description):
        return _denied(sink, progress, call, card)
    sink.tool_started(call, argument_summary(call.arguments), card)
    setup.context.turn.call_id = call.id
    result = await call_tool(setup.context, call.name, call.arguments, approval)
    progress.tool_calls += 1
    outcome, summary = result_summary(result)
    progress.new_messages.append(
        ToolResult(
            call_id=call.id,
            content=serialize_result(result),
            is_error=outcome != "ok",
            description=description,
        )
    )
    sink.tool_finished(call, outcome, summary, _ended_card(setup.context, card, result))
    return True


def _denied(sink: TurnSink, progress: TurnProgress, call: ToolCall, card: CallCard) -> bool:
    """A member denied ``call`` (or the turn stopped while it waited): the turn ends here."""
    if progress.status is not None:
        # Stopped while it waited: nobody denied it; the call is closed as not run.
        return False
    denied = ToolResult(
        call_id=call.id, content=DENIED, is_error=True, description=card.description
    )
    progress.new_messages.append(denied)
    sink.tool_finished(call, "refused", "denied by a member", card)
    progress.end("denied", f"a member denied {call.name}")
    return False


async def _run_extra_call(
    extra: TurnTools,
    sink: TurnSink,
    consent: Consent,
    progress: TurnProgress,
    call: ToolCall,
) -> bool:
    """One call of a turn's own tools (an MCP server's): gated unless let run unasked."""
    description = _shown(extra.describe(call.name, call.arguments))
    card = CallCard(description)
    if extra.asks(call.name) and not await consent(call, description):
        return _denied(sink, progress, call, card)
    sink.tool_started(call, argument_summary(call.arguments), card)
    answer = await extra.call(call.name, call.arguments)
    progress.tool_calls += 1
    outcome, summary = result_summary(answer.result)
    progress.new_messages.append(
        ToolResult(
            call_id=call.id,
            content=serialize_result(answer.result),
            is_error=outcome != "ok",
            description=description,
            images=answer.images,
        )
    )
    sink.tool_finished(call, outcome, summary, card)
    return True


def _ended_card(context: ToolContext, card: CallCard, result: dict[str, Any]) -> CallCard:
    """The card of a call that ended: with the tab it worked in or opened (an ``open``
    names its new tab in its result) and that tab's title now."""
    answered = result.get("tabId")
    tab_id = answered if isinstance(answered, str) else card.tab_id
    if tab_id is None:
        return card
    try:
        title: str | None = context.engine.get_tab(context.team_id, tab_id).title
    except CrewhostError:
        title = None  # closed by the call itself
    return replace(card, tab_id=tab_id, tab_title=_shown(title))


def _shown(line: str | None) -> str | None:
    """A card's line as a member may read it: a page or a server wrote part of it, and a
    bidirectional override there could show one site's name as another's."""
    return None if line is None else shown_line(line)


def argument_summary(arguments: dict[str, Any], limit: int = 120) -> str:
    """The arguments a member sees on a tool call card, short; a typed text is not shown."""
    hidden = ("text", "value", "values", "fields")
    shown = {k: ("…" if k in hidden else v) for k, v in arguments.items()}
    text = json.dumps(shown, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Tools whose consent prompt shows their code itself: the member approves what will run.
CODE_ARGUMENTS = {"run_script": "script", "execute_script": "code", "evaluate": "expression"}
# The most of that code a prompt shows; a longer one says how much is left out.
CONSENT_CODE_SHOWN = 16_000


def consent_summary(call: ToolCall) -> str:
    """What a consent prompt says of ``call``: the tool, its short arguments, and for a tool
    that runs code (a whole script is one gated call) the code itself."""
    field = CODE_ARGUMENTS.get(call.name)
    code = call.arguments.get(field) if field is not None else None
    if not isinstance(code, str):
        return shown_text(f"{call.name} {argument_summary(call.arguments)}")
    others = {k: v for k, v in call.arguments.items() if k != field}
    shown = code[:CONSENT_CODE_SHOWN]
    if len(code) > CONSENT_CODE_SHOWN:
        shown += f"\n[... {len(code) - CONSENT_CODE_SHOWN} more characters not shown]"
    return shown_text(f"{call.name} {argument_summary(others)}\n{shown}")


def _repaired(call: ToolCall) -> ToolCall:
    """``call`` with its arguments as the tool will read them; as written when they cannot be
    repaired (the tool then refuses them without acting)."""
    try:
        arguments = repair_arguments(call.name, call.arguments)
    except ToolFailure:
        return call
    return call.model_copy(update={"arguments": arguments})


def result_summary(result: dict[str, Any]) -> tuple[ToolOutcome, str]:
    """Ok, refused (with its reason) or error, and a short line saying what came back."""
    error = result.get("error")
    if isinstance(error, dict):
        code = str(error.get("code", "error"))
        message = str(error.get("message", ""))[:200]
        return ("error" if code == "toolFailed" else "refused"), f"{code}: {message}"
    text = serialize_result(result)
    for mark in ("NOT VERIFIED", "MISMATCH"):
        if mark in text:
            return "ok", mark
    return "ok", "ok"
