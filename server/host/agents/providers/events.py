"""The typed events of one streamed model reply, the same for every wire format.

A stream yields, in order: text and tool-call deltas as they arrive; then, once
the reply's stop reason is known, one verdict per tool call (finished, invalid or
dropped); then ``Usage``; then ``Finished``. A stream that fails ends with
``Failed`` instead, wherever it was. Exactly one ``Finished`` or ``Failed`` ends
every stream read to its end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from server.host.agents.providers.errors import ProviderError

# Why the model stopped, in one vocabulary for both wire formats:
#   end_turn       it finished its answer (Anthropic end_turn, OpenAI stop)
#   tool_use       it wants tool results (Anthropic tool_use, OpenAI tool_calls)
#   max_tokens     it hit the request's max_tokens (Anthropic max_tokens, OpenAI length)
#   stop_sequence  it produced a stop sequence (Anthropic only)
#   refusal        a safety filter stopped it (Anthropic refusal, OpenAI content_filter)
#   other          anything else; Finished.raw_stop_reason says what
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


@dataclass(frozen=True, slots=True)
class StreamTextDelta:
    """More of the reply's text."""

    text: str


@dataclass(frozen=True, slots=True)
class StreamToolCallStarted:
    """The model began a tool call."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    """More of a tool call's arguments, a fragment of JSON text (for progress display)."""

    id: str
    json_fragment: str


@dataclass(frozen=True, slots=True)
class StreamToolCallFinished:
    """A complete tool call, its arguments parsed into a JSON object."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallInvalid:
    """A complete tool call whose arguments are not a JSON object.

    It stays in the reply (with empty arguments) so the turn loop answers it with an
    error result and the model can try again.
    """

    id: str
    name: str
    raw_arguments: str
    reason: str


@dataclass(frozen=True, slots=True)
class ToolCallDropped:
    """A tool call cut off before its arguments were complete (by max_tokens, typically).

    It is left out of the reply: there is nothing to run and nothing to answer.
    """

    id: str
    name: str
    reason: str


# The most tokens one request is counted for, per figure: more than any model reads or
# writes at once. A larger figure is the server's mistake (an OpenAI-compatible one can send
# anything), and counted as given it would overflow a turn's totals in storage.
MAX_REPORTED_TOKENS = 10_000_000


def token_count(value: object) -> int:
    """A usage figure as a server sent it, read as tokens: absent (None) is 0, a whole
    number is held within 0 to ``MAX_REPORTED_TOKENS``; anything else (a string, a bool, a
    fraction) is a ``ValueError``, the stream's own mistake."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a token count of type {type(value).__name__}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("a token count that is not a whole number")
    return max(0, min(int(value), MAX_REPORTED_TOKENS))


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens the reply cost: input (cached reads and writes included) and output
    (reasoning included), and of those the kinds the provider names apart: input read from
    its cache, input written to it, and output spent on reasoning (0 when not given)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Finished:
    """The reply is complete."""

    stop_reason: StopReason
    raw_stop_reason: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The reply failed; the stream ends here. See :class:`ProviderError` for ``started``.

    ``usage`` is what the provider had counted before the failure (None: it reported
    nothing), so the tokens of a failed reply are recorded too.
    """

    error: ProviderError
    usage: Usage | None = None


StreamEvent = (
    StreamTextDelta
    | StreamToolCallStarted
    | ToolCallArgumentsDelta
    | StreamToolCallFinished
    | ToolCallInvalid
    | ToolCallDropped
    | Usage
    | Finished
    | Failed
)
