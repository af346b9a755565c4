"""Sub-agents: a sub-task run as a turn of its own inside the parent's turn.

A sub-agent has its own conversation (only its prompt), the parent's provider, model
and instructions, and the tools of its type. Its tool calls count against the parent
turn's cap, its gated calls ask for consent as the parent's do, and it runs inside the
parent's task, so stopping the parent stops it. What it does is told as ``sub-agent``
events: text once before each tool call and at its end, not delta by delta.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from server.common.protocol import events
from server.host.agents.prompt import sub_agent_prompt
from server.host.agents.providers.transcript import AssistantMessage, ToolCall, UserMessage
from server.host.agents.turn_loop import (
    CallCard,
    Consent,
    ToolOutcome,
    TurnProgress,
    TurnSetup,
    run_turn,
)
from server.host.tools.catalog import sub_agent_tools
from server.host.tools.context import SubAgentReport, SubAgentRequest, TurnState

SubAgentPhase = Literal["started", "text", "tool-started", "tool-finished", "finished"]


async def run_sub_agent(
    parent: TurnSetup,
    progress: TurnProgress,
    request: SubAgentRequest,
    *,
    instructions: str,
    consent: Consent,
    tell: Callable[[events.HostEvent], None],
    thread_id: str,
    turn_id: str,
) -> SubAgentReport | None:
    """Run a sub-agent to its end with what is left of the parent's tool calls (None, and
    nothing runs, when none is left); its calls and tokens join ``progress``."""
    left = parent.max_tool_calls - progress.tool_calls - 1  # the agent call counts too
    if left <= 0:
        return None
    context = replace(
        parent.context,
        turn=TurnState(),
        sub_agent=True,
        ask_person=None,
        spawn_sub_agent=None,
        delegation=None,
        tasks=parent.context.tasks if request.type == "general" else None,
    )
    sub_agent_id = uuid.uuid4().hex[:16]
    prompt = request.prompt
    if request.tab_id is not None:
        prompt += f"\n\nWork in the tab with tabId {request.tab_id}."
    setup = TurnSetup(
        provider=parent.provider,
        model=parent.model,
        system=sub_agent_prompt(instructions),
        transcript=[UserMessage(text=prompt)],
        context=context,
        permissions=parent.permissions,
        max_tool_calls=left,
        max_tokens=parent.max_tokens,
        allowed_tools=sub_agent_tools(request.type),
        call_id_prefix=f"{parent.call_id_prefix}.{sub_agent_id}",
        # Its requests count as the parent turn's, against the same budgets.
        meter=parent.meter,
    )
    sink = SubAgentSink(sub_agent_id, request, tell, thread_id, turn_id)
    sink.tell("started")
    sub = TurnProgress()
    try:
        await run_turn(setup, sink, consent, sub)
    finally:
        # Counted against the parent whatever ended it, a stop included.
        progress.tool_calls += sub.tool_calls
        progress.input_tokens += sub.input_tokens
        progress.output_tokens += sub.output_tokens
        sink.flush()
        sink.tell("finished", status=sub.status or "stopped")
    replies = [m for m in sub.new_messages if isinstance(m, AssistantMessage) and m.text]
    return SubAgentReport(
        sub_agent_id=sink.sub_agent_id,
        status=sub.status or "error",
        reason=sub.reason,
        report=replies[-1].text if replies else "",
        tool_calls=sub.tool_calls,
    )


class SubAgentSink:
    """The turn sink of a sub-agent: ``sub-agent`` events in the parent's thread."""

    def __init__(
        self,
        sub_agent_id: str,
        request: SubAgentRequest,
        tell: Callable[[events.HostEvent], None],
        thread_id: str,
        turn_id: str,
    ) -> None:
        self.sub_agent_id = sub_agent_id
        self._request = request
        self._tell = tell
        self._thread_id = thread_id
        self._turn_id = turn_id
        self._pending: list[str] = []

    def tell(self, phase: SubAgentPhase, **fields: Any) -> None:
        self._tell(
            events.SubAgentEvent(
                thread_id=self._thread_id,
                turn_id=self._turn_id,
                sub_agent_id=self.sub_agent_id,
                description=self._request.description,
                type=self._request.type,
                phase=phase,
                **fields,
            )
        )

    def text(self, delta: str) -> None:
        self._pending.append(delta)

    def text_reset(self, reason: str) -> None:
        # Its text goes out only before a tool call and at its end: nothing of the broken
        # reply was told yet.
        self._pending = []

    def flush(self) -> None:
        if self._pending:
            text, self._pending = "".join(self._pending), []
            self.tell("text", text=text)

    def tool_started(self, call: ToolCall, summary: str, card: CallCard) -> None:
        self.flush()
        self.tell("tool-started", tool=call.name, text=summary)

    def tool_finished(
        self, call: ToolCall, outcome: ToolOutcome, summary: str, card: CallCard
    ) -> None:
        self.tell("tool-finished", tool=call.name, outcome=outcome, text=summary)
