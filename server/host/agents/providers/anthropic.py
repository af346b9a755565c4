"""The Anthropic Messages API, streamed: ``POST {base_url}/v1/messages``.

``base_url`` is the one Anthropic's SDKs take, without ``/v1``
(``https://api.anthropic.com``); one that already ends in ``/v1`` is accepted too.
The system prompt goes in ``system``, tools with ``input_schema``, tool calls as
``tool_use`` blocks and their results as ``tool_result`` blocks at the start of the
next user message. Events read: ``message_start`` (input tokens), text and
``tool_use`` blocks with their ``text_delta`` and ``input_json_delta`` deltas,
``content_block_stop``, ``message_delta`` (stop reason, output tokens),
``message_stop``, ``ping``, and ``error`` (``overloaded_error`` and the like).
Unknown events and block types (thinking, citations) are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from server.common.json_text import read_json
from server.host.agents.providers.calls import PendingCall
from server.host.agents.providers.errors import (
    ProviderError,
    ProviderErrorKind,
    kind_for_status,
    redacted,
)
from server.host.agents.providers.events import (
    Finished,
    StopReason,
    StreamEvent,
    StreamTextDelta,
    StreamToolCallStarted,
    ToolCallArgumentsDelta,
    Usage,
    token_count,
)
from server.host.agents.providers.sse import SSEEvent
from server.host.agents.providers.stream import (
    HttpOptions,
    ModelRequest,
    ModelStream,
    PreparedRequest,
    provider_message,
)
from server.host.agents.providers.transcript import (
    AssistantMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
    WireIds,
)

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
# How much of an event type or stop reason from the stream an error message or event shows.
MAX_EVENT_TYPE_CHARS = 40
ANTHROPIC_VERSION = "2023-06-01"
LABEL = "Anthropic"

_KIND_OF_ERROR_TYPE: dict[str, ProviderErrorKind] = {
    "invalid_request_error": "invalid_request",
    "request_too_large": "invalid_request",
    "authentication_error": "authentication",
    "permission_error": "permission",
    "billing_error": "quota",
    "not_found_error": "not_found",
    "rate_limit_error": "rate_limited",
    "api_error": "server_error",
    "overloaded_error": "overloaded",
    "timeout_error": "timeout",
}

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}


class AnthropicProvider:
    """Streams replies from the Messages API over the caller's ``session``."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        api_key: str | None,
        base_url: str = ANTHROPIC_BASE_URL,
        http: HttpOptions | None = None,
    ) -> None:
        self._session = session
        self._wire = AnthropicWire(api_key=api_key, base_url=base_url)
        self._http = http or HttpOptions()

    def stream(self, request: ModelRequest) -> ModelStream:
        """The reply to ``request``, as a stream of events (see :class:`ModelStream`)."""
        return ModelStream(self._session, self._wire, request, self._http)


@dataclass(frozen=True)
class AnthropicWire:
    """The Messages API's wire format (a :class:`.stream.WireFormat`)."""

    api_key: str | None = field(repr=False)
    base_url: str = ANTHROPIC_BASE_URL

    @property
    def label(self) -> str:
        return LABEL

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return base + "/messages" if base.endswith("/v1") else base + "/v1/messages"

    def prepare(self, request: ModelRequest) -> PreparedRequest:
        if not self.api_key:
            raise ProviderError("no_key", "no API key is set for Anthropic")
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": render_messages(request.messages),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = render_tools(request.tools)
        headers = {
            "x-api-key": self.api_key,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "text/event-stream",
        }
        return PreparedRequest(self.url, headers, body)

    def decoder(self) -> AnthropicDecoder:
        return AnthropicDecoder(self)

    def error_from_body(
        self, status: int, body: bytes, retry_after: float | None
    ) -> ProviderError | None:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            return None
        return self.error_from_document(document, status, retry_after)

    def error_from_document(
        self, document: object, status: int, retry_after: float | None
    ) -> ProviderError | None:
        """The error of ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
        if not isinstance(document, dict) or not isinstance(document.get("error"), dict):
            return None
        error: dict[str, Any] = document["error"]
        error_type = str(error.get("type", ""))
        kind = _KIND_OF_ERROR_TYPE.get(error_type) or kind_for_status(status)
        details = error.get("details")
        if (
            isinstance(details, dict)
            and details.get("error_code") == "enforced_spend_limit_reached"
        ):
            kind = "quota"  # a 429 that no wait this month will fix
        detail = str(error.get("message") or error_type)
        return ProviderError(
            kind,
            provider_message(LABEL, status, detail, self.api_key),
            status=status if status != 200 else None,
            retry_after=retry_after,
        )

    def redact(self, text: str) -> str:
        return redacted(text, self.api_key)


class AnthropicDecoder:
    """The events of one Messages stream."""

    def __init__(self, wire: AnthropicWire) -> None:
        self._wire = wire
        self._calls: dict[int, PendingCall] = {}  # by content block index
        # The latest count of each usage field (message_delta repeats them cumulatively).
        self._counts: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    @property
    def usage(self) -> Usage | None:
        return self._usage() if self._counts else None

    def feed(self, event: SSEEvent) -> Iterable[StreamEvent]:
        if event.event == "ping":
            return ()
        try:
            data = read_json(event.data)
        except (ValueError, RecursionError):
            raise ProviderError(
                "malformed_stream",
                f"Anthropic sent an event that is not JSON ({self._shown(event.event)})",
            ) from None
        if not isinstance(data, dict):
            raise ProviderError("malformed_stream", "Anthropic sent an event that is not an object")
        kind = data.get("type", event.event)
        if kind == "error":
            error = self._wire.error_from_document(data, 200, None)
            raise error or ProviderError("server_error", "Anthropic failed mid-reply")
        try:
            return self._event(kind, data)
        except (KeyError, TypeError, AttributeError, ValueError):
            raise ProviderError(
                "malformed_stream",
                f"Anthropic sent a {self._shown(kind)} event of an unexpected shape",
            ) from None

    def _shown(self, text: object) -> str:
        """Text from the stream as an error message may quote it: redacted and short."""
        return redacted(str(text), self._wire.api_key, limit=MAX_EVENT_TYPE_CHARS)

    def _event(self, kind: str, data: dict[str, Any]) -> list[StreamEvent]:
        if kind == "message_start":
            self._count(data["message"].get("usage") or {})
        elif kind == "content_block_start":
            block = data["content_block"]
            if block["type"] == "tool_use":
                if not isinstance(block["id"], str) or not isinstance(block["name"], str):
                    raise ProviderError(
                        "malformed_stream",
                        "Anthropic sent a tool call whose id or name is not a string",
                    )
                call = PendingCall(block["id"], block["name"])
                self._calls[data["index"]] = call
                events: list[StreamEvent] = [StreamToolCallStarted(call.id, call.name)]
                if block.get("input"):
                    # A block may open with its whole input rather than stream it.
                    call.fragments.append(json.dumps(block["input"]))
                return events
            if block["type"] == "text" and block.get("text"):
                return [StreamTextDelta(_text(block["text"]))]
        elif kind == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta" and delta["text"]:
                return [StreamTextDelta(_text(delta["text"]))]
            if delta["type"] == "input_json_delta":
                call = self._calls[data["index"]]
                call.fragments.append(_text(delta["partial_json"]))
                if delta["partial_json"]:
                    return [ToolCallArgumentsDelta(call.id, delta["partial_json"])]
        elif kind == "content_block_stop":
            call_or_none = self._calls.get(data["index"])
            if call_or_none is not None:
                call_or_none.closed = True
        elif kind == "message_delta":
            stop_reason = data["delta"].get("stop_reason")
            if stop_reason:
                self._stop_reason = redacted(_text(stop_reason), None, limit=MAX_EVENT_TYPE_CHARS)
            self._count(data.get("usage") or {})
        elif kind == "message_stop":
            self._done = True
        return []

    def _count(self, usage: dict[str, Any]) -> None:
        # Counts in message_delta are cumulative; input counts there are optional.
        for name in (*_INPUT_TOKEN_FIELDS, "output_tokens"):
            count = usage.get(name)
            if isinstance(count, int) and not isinstance(count, bool):
                self._counts[name] = token_count(count)

    def _usage(self) -> Usage:
        counts = self._counts
        return Usage(
            input_tokens=sum(counts.get(name, 0) for name in _INPUT_TOKEN_FIELDS),
            output_tokens=counts.get("output_tokens", 0),
            cache_read_tokens=counts.get("cache_read_input_tokens", 0),
            cache_write_tokens=counts.get("cache_creation_input_tokens", 0),
        )

    def end(self) -> Iterable[StreamEvent]:
        if not self._done:
            raise ProviderError(
                "network", "the Anthropic stream ended before the reply was complete"
            )
        raw = self._stop_reason or "end_turn"
        cut_off = raw in ("max_tokens", "model_context_window_exceeded")
        events: list[StreamEvent] = [
            call.verdict(cut_off=cut_off or not call.closed) for call in self._calls.values()
        ]
        events.append(self._usage())
        events.append(Finished(_STOP_REASONS.get(raw, "other"), raw))
        return events


_INPUT_TOKEN_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _text(value: object) -> str:
    """``value``, which the wire format says is text; a ValueError when it is not."""
    if not isinstance(value, str):
        raise ValueError("expected text")
    return value


def render_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as the Messages API takes them."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


def render_messages(
    messages: Sequence[UserMessage | AssistantMessage | ToolResult],
) -> list[dict[str, Any]]:
    """The transcript as Messages API ``messages``.

    Consecutive messages of one role merge into one (tool results and a member's next
    words share the user turn, results first); empty text is left out, since the API
    refuses empty text blocks.
    """
    rendered: list[dict[str, Any]] = []
    wire_ids = WireIds()

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if rendered and rendered[-1]["role"] == role:
            rendered[-1]["content"].extend(blocks)
        else:
            rendered.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, UserMessage):
            text = message.delivered_text()
            user: list[dict[str, Any]] = [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": i.media_type, "data": i.data},
                }
                for i in message.images
            ]
            add("user", [*user, {"type": "text", "text": text}] if text else user)
        elif isinstance(message, AssistantMessage):
            blocks: list[dict[str, Any]] = []
            if message.text:
                blocks.append({"type": "text", "text": message.text})
            blocks.extend(
                {
                    "type": "tool_use",
                    "id": wire_ids.of_call(call),
                    "name": call.name,
                    "input": call.arguments,
                }
                for call in message.tool_calls
            )
            add("assistant", blocks)
        else:
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": wire_ids.of_result(message),
            }
            if message.images:
                # A tool result may hold image blocks beside its text.
                result["content"] = [
                    {"type": "text", "text": message.content or "(no text)"},
                    *(
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": i.media_type,
                                "data": i.data,
                            },
                        }
                        for i in message.images
                    ),
                ]
            elif message.content:
                result["content"] = message.content
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
    return rendered
