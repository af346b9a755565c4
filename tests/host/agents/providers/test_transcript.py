"""The provider-neutral transcript: the tool-call rule, closing dangling calls, storage."""

from __future__ import annotations

from server.host.agents.providers.transcript import (
    AnyMessage,
    AssistantMessage,
    ToolCall,
    ToolResult,
    UserMessage,
    close_dangling_calls,
    message_from_json,
    message_to_json,
    transcript_problems,
    unanswered_calls,
    wire_call_id,
)

READ = ToolCall(id="c1", name="read_page", arguments={"selector": "h1"})
CLICK = ToolCall(id="c2", name="click", arguments={"selector": "#buy"})


def test_a_valid_transcript_has_no_problems() -> None:
    transcript: list[AnyMessage] = [
        UserMessage(text="Go"),
        AssistantMessage(text="Reading.", tool_calls=(READ, CLICK)),
        ToolResult(call_id="c2", content="clicked"),
        ToolResult(call_id="c1", content="Title"),
        AssistantMessage(text="Done."),
    ]
    assert transcript_problems(transcript) == []
    assert close_dangling_calls(transcript, "unused") == transcript


def test_a_denial_leaves_a_call_without_a_result_and_closing_answers_it() -> None:
    transcript: list[AnyMessage] = [
        UserMessage(text="Buy it"),
        AssistantMessage(tool_calls=(READ, CLICK)),
        ToolResult(call_id="c1", content="Title"),
        UserMessage(text="Why did you stop?"),
    ]
    assert unanswered_calls(transcript) == [CLICK]
    assert transcript_problems(transcript) == ["tool call c2 (click) has no result"]

    closed = close_dangling_calls(transcript, "the member denied this action")

    assert closed == [
        UserMessage(text="Buy it"),
        AssistantMessage(tool_calls=(READ, CLICK)),
        ToolResult(call_id="c1", content="Title"),
        ToolResult(call_id="c2", content="the member denied this action", is_error=True),
        UserMessage(text="Why did you stop?"),
    ]
    assert transcript_problems(closed) == []


def test_calls_at_the_very_end_are_closed() -> None:
    transcript: list[AnyMessage] = [UserMessage(text="Go"), AssistantMessage(tool_calls=(READ,))]
    closed = close_dangling_calls(transcript, "the turn was stopped")
    assert closed[-1] == ToolResult(call_id="c1", content="the turn was stopped", is_error=True)


def test_orphan_and_duplicate_results_are_left_out() -> None:
    transcript: list[AnyMessage] = [
        UserMessage(text="Go"),
        ToolResult(call_id="ghost", content="?"),
        AssistantMessage(tool_calls=(READ,)),
        ToolResult(call_id="c1", content="one"),
        ToolResult(call_id="c1", content="two"),
    ]
    assert len(transcript_problems(transcript)) == 2
    closed = close_dangling_calls(transcript, "x")
    assert closed == [transcript[0], transcript[2], transcript[3]]


def test_messages_round_trip_through_json() -> None:
    for message in (
        UserMessage(text="héllo"),
        AssistantMessage(text="t", tool_calls=(READ,)),
        ToolResult(call_id="c1", content="r", is_error=True),
    ):
        assert message_from_json(message_to_json(message)) == message
    assert '"callId":"c1"' in message_to_json(ToolResult(call_id="c1", content="r"))


def test_wire_call_ids_are_portable_and_stable() -> None:
    assert wire_call_id("toolu_01ABC") == "toolu_01ABC"
    assert wire_call_id("call-x_1") == "call-x_1"
    odd = wire_call_id("functions.read_page:0")
    assert odd == wire_call_id("functions.read_page:0")
    assert odd.startswith("call_")
    assert len(odd) <= 40
    assert len(wire_call_id("x" * 41)) <= 40
    assert wire_call_id("functions.read_page:1") != odd
