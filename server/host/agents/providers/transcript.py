"""A provider-neutral transcript: what each adapter renders into its own wire format.

Three kinds of message: a member's text, the assistant's text with its tool calls,
and the result of one tool call. One rule keeps a transcript valid on every wire
format: each tool call of an assistant message has exactly one result after it and
before the next user or assistant message. :func:`close_dangling_calls` restores
the rule after a denial, a cap, a stop or an error, so the next request, on either
wire format, is accepted.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from server.common.wire import WireModel


class Attachment(WireModel):
    """A file sent with a member's message, kept in the agent's workspace at ``path``."""

    name: str
    path: str
    mime_type: str
    kind: Literal["image", "file"]
    preview_kind: Literal["image", "none"]
    size: int
    sha256: str


class ImageBlock(WireModel):
    """An image attachment's bytes (base64), loaded for one request, never stored."""

    sha256: str
    media_type: str
    data: str


class UserMessage(WireModel):
    """What a member wrote, and the files they attached."""

    role: Literal["user"] = "user"
    text: str
    attachments: tuple[Attachment, ...] = ()
    # Who wrote it: a member's account id; None for a message no person sent (a routine's,
    # another agent's question) or one stored before authors were kept.
    account_id: str | None = None
    # The image attachments a provider takes as image blocks, loaded for the request.
    images: tuple[ImageBlock, ...] = Field(default=(), exclude=True)

    def delivered_text(self) -> str:
        """The text with a mention of each attachment that is not sent as an image: the
        agent reads it from its workspace."""
        sent = {image.sha256 for image in self.images}
        mentions = [
            f"[Attached file: {a.path} ({a.mime_type}, {a.size} bytes), in your workspace]"
            for a in self.attachments
            if a.sha256 not in sent
        ]
        return "\n".join([self.text, *mentions]) if mentions else self.text


class ToolCall(WireModel):
    """One tool call the model made. Invalid arguments are kept as an empty object.

    ``id`` is the host's own (the turn's id and the call's number in it): cards, consent
    and results are keyed by it, because providers repeat their ids across turns.
    ``provider_id`` is the provider's, used only on the wire back to it; a call stored
    before the host named its calls has none and its ``id`` is the provider's.
    """

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    provider_id: str | None = None

    def wire_id(self) -> str:
        """The id this call and its result carry on the wire to the provider."""
        return wire_call_id(self.provider_id or self.id)


class AssistantMessage(WireModel):
    """What the model answered: text, tool calls, or both."""

    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class ToolResult(WireModel):
    """The result of one tool call, text for the model; ``is_error`` when the call failed."""

    role: Literal["tool"] = "tool"
    call_id: str
    content: str
    is_error: bool = False
    # A gated call's one line for a person (never sent to a provider): a reloaded card
    # reads what the live one said.
    description: str | None = None
    # Images the result shows (an MCP server's), sent as image blocks where a provider takes
    # them in a tool result, for the requests of the turn that made them; never stored (the
    # text describes each).
    images: tuple[ImageBlock, ...] = Field(default=(), exclude=True)


@dataclass(frozen=True)
class ToolAnswer:
    """What a turn's own tool (an MCP server's) answered: the result the model reads as
    text, and the images it shows."""

    result: dict[str, Any]
    images: tuple[ImageBlock, ...] = ()


AnyMessage = UserMessage | AssistantMessage | ToolResult
# What members never read of a message: the provider's own ids of its tool calls.
PROVIDER_ONLY: dict[str, Any] = {"tool_calls": {"__all__": {"provider_id"}}}
Message = Annotated[AnyMessage, Field(discriminator="role")]

# mypy takes an annotated union for no type at all; pydantic reads it fine.
_MESSAGE: TypeAdapter[AnyMessage] = TypeAdapter(Message)  # type: ignore[arg-type, unused-ignore]


def message_from_json(data: str | bytes) -> AnyMessage:
    """One message read back from JSON, e.g. a thread_messages row's body."""
    return _MESSAGE.validate_json(data)


def message_to_json(message: AnyMessage) -> str:
    """One message as JSON, the inverse of :func:`message_from_json`."""
    return message.model_dump_json()


class ToolSpec(WireModel):
    """A tool offered to the model: its name, what it does, and a JSON Schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


def unanswered_calls(
    messages: Sequence[AnyMessage],
) -> list[ToolCall]:
    """The tool calls that have no result where the rule wants one, in transcript order."""
    missing: list[ToolCall] = []
    open_calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, ToolResult):
            open_calls.pop(message.call_id, None)
            continue
        missing.extend(open_calls.values())
        open_calls = {}
        if isinstance(message, AssistantMessage):
            open_calls = {call.id: call for call in message.tool_calls}
    missing.extend(open_calls.values())
    return missing


def transcript_problems(
    messages: Sequence[AnyMessage],
) -> list[str]:
    """Why a provider would refuse this transcript; empty when it is valid."""
    problems = [
        f"tool call {call.id} ({call.name}) has no result" for call in unanswered_calls(messages)
    ]
    open_ids: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, ToolResult):
            if message.call_id not in open_ids:
                problems.append(
                    f"message {index}: result for {message.call_id} answers no open tool call"
                )
            open_ids.discard(message.call_id)
        elif isinstance(message, AssistantMessage):
            open_ids = {call.id for call in message.tool_calls}
        else:
            open_ids = set()
    return problems


def close_dangling_calls(messages: Iterable[AnyMessage], reason: str) -> list[AnyMessage]:
    """A valid copy of the transcript: every call without a result gets an error result
    saying ``reason``, placed after the results its message already has; a result that
    answers no open call (an orphan, or a second answer) is left out."""
    closed: list[AnyMessage] = []
    open_calls: dict[str, ToolCall] = {}

    def close_open() -> None:
        closed.extend(
            ToolResult(call_id=call_id, content=reason, is_error=True) for call_id in open_calls
        )
        open_calls.clear()

    for message in messages:
        if isinstance(message, ToolResult):
            if open_calls.pop(message.call_id, None) is not None:
                closed.append(message)
            continue
        close_open()
        closed.append(message)
        if isinstance(message, AssistantMessage):
            open_calls = {call.id: call for call in message.tool_calls}
    close_open()
    return closed


_PORTABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


class WireIds:
    """The wire id of each call rendered so far, for the results that answer them."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}

    def of_call(self, call: ToolCall) -> str:
        self._ids[call.id] = call.wire_id()
        return self._ids[call.id]

    def of_result(self, result: ToolResult) -> str:
        return self._ids.get(result.call_id) or wire_call_id(result.call_id)


def wire_call_id(call_id: str) -> str:
    """A tool-call id every wire format accepts, the same each time for the same id.

    Anthropic wants ``[A-Za-z0-9_-]+`` and OpenAI at most 40 characters; ids from other
    providers (``functions.read:0``) are replaced by a digest so a call and its result
    still match.
    """
    if _PORTABLE_ID.fullmatch(call_id):
        return call_id
    return "call_" + hashlib.sha256(call_id.encode()).hexdigest()[:32]
