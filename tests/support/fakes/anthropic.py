"""A local Anthropic Messages API: ``POST /v1/messages``, streamed, scripted per test.

It refuses requests the way the real API does, with Anthropic's error body
(``{"type": "error", "error": {"type": ..., "message": ...}}``): a missing or wrong
``x-api-key`` (401 ``authentication_error``), a missing ``anthropic-version``, a
missing field, an empty text block, a malformed tool-use id, and a ``tool_use``
without a ``tool_result`` in the next message (or a result that answers no call).
:class:`MessageEvents` writes the events of one streamed message.
"""

from __future__ import annotations

import json
import re
from typing import Any, Self

from aiohttp import web

from tests.support.fakes.server import (
    ErrorReply,
    FakeProviderServer,
    RecordedRequest,
    StreamReply,
    sse,
)

API_KEY = "sk-ant-fake-0123456789abcdef"
# The API's keep-alive event, sent while a reply is slow to come.
PING = sse("ping", {"type": "ping"}).encode()
_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def anthropic_error(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> ErrorReply:
    """An error reply in Anthropic's shape."""
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_fake",
    }
    return ErrorReply(status, body, headers or {})


def _refuse(status: int, error_type: str, message: str) -> web.Response:
    error = anthropic_error(status, error_type, message)
    return web.json_response(error.body, status=status)


class FakeAnthropic(FakeProviderServer):
    """The Messages API on loopback; ``base_url`` is the origin, as the SDKs take it."""

    path = "/v1/messages"
    models_path = "/v1/models"

    def __init__(self, *, api_key: str = API_KEY, latency: float = 0.001) -> None:
        super().__init__(latency=latency)
        self.api_key = api_key

    def key_refusal(self, request: RecordedRequest) -> web.Response | None:
        key = request.headers.get("x-api-key")
        if key is None:
            return _refuse(401, "authentication_error", "x-api-key header is required")
        if key != self.api_key:
            return _refuse(401, "authentication_error", "invalid x-api-key")
        if "anthropic-version" not in request.headers:
            return _refuse(400, "invalid_request_error", "anthropic-version: header is required")
        return None

    def models(self) -> dict[str, Any]:
        model = {
            "type": "model",
            "id": "claude-sonnet-4-5",
            "display_name": "Claude Sonnet 4.5",
            "created_at": "2025-09-29T00:00:00Z",
        }
        return {"data": [model], "has_more": False, "first_id": model["id"], "last_id": model["id"]}

    def refusal(self, request: RecordedRequest) -> web.Response | None:
        refused = self.key_refusal(request)
        if refused is not None:
            return refused
        problem = _body_problem(request.body)
        if problem is not None:
            return _refuse(400, "invalid_request_error", problem)
        return None


def _body_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "The request body is not valid JSON."
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    if body.get("stream") is not True:
        return "stream: this fake serves streams only"
    for index, tool in enumerate(body.get("tools") or ()):
        if not isinstance(tool.get("input_schema"), dict):
            return f"tools.{index}.input_schema: Field required"
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    previous_tool_uses: list[str] = []
    for index, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{index}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not blocks:
            return (
                f"messages.{index}: all messages must have non-empty content except for the"
                " optional final assistant message"
            )
        result_ids: list[str] = []
        tool_use_ids: list[str] = []
        for number, block in enumerate(blocks):
            where = f"messages.{index}.content.{number}"
            if block.get("type") == "text" and not block.get("text"):
                return "messages: text content blocks must be non-empty"
            if block.get("type") == "tool_use":
                if message["role"] != "assistant":
                    return f"{where}: tool_use blocks are only allowed in assistant messages"
                if not _TOOL_USE_ID.match(str(block.get("id", ""))):
                    return f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                if not isinstance(block.get("input"), dict):
                    return f"{where}.tool_use.input: Input should be a valid dictionary"
                tool_use_ids.append(block["id"])
            if block.get("type") == "tool_result":
                if message["role"] != "user":
                    return f"{where}: tool_result blocks are only allowed in user messages"
                result_ids.append(block.get("tool_use_id"))
        unexpected = [i for i in result_ids if i not in previous_tool_uses]
        if unexpected:
            return (
                f"messages.{index}.content.0: unexpected `tool_use_id` found in `tool_result`"
                f" blocks: {', '.join(unexpected)}. Each `tool_result` block must have a"
                " corresponding `tool_use` block in the previous message."
            )
        missing = [i for i in previous_tool_uses if i not in result_ids]
        if missing:
            return _tool_use_without_result(index - 1, missing)
        previous_tool_uses = tool_use_ids
    if previous_tool_uses:
        return _tool_use_without_result(len(messages) - 1, previous_tool_uses)
    return None


def _tool_use_without_result(index: int, ids: list[str]) -> str:
    return (
        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately"
        f" after: {', '.join(ids)}. Each `tool_use` block must have a corresponding"
        " `tool_result` block in the next message."
    )


class MessageEvents:
    """The events of one streamed message, written in order by chained calls.

    Example: ``MessageEvents().text("Looking.").tool_use("toolu_1", "read", {}).stop("tool_use")``.
    """

    def __init__(
        self,
        *,
        model: str = "claude-fake",
        input_tokens: int = 21,
        message_id: str = "msg_fake",
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> None:
        usage: dict[str, int] = {"input_tokens": input_tokens, "output_tokens": 1}
        # The API names its cache counts apart from input_tokens (which excludes them).
        if cache_read is not None:
            usage["cache_read_input_tokens"] = cache_read
        if cache_write is not None:
            usage["cache_creation_input_tokens"] = cache_write
        self._events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": message_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                },
            )
        ]
        self._blocks = 0
        self._output_tokens = 1

    def _add(self, event: str, data: dict[str, Any]) -> None:
        self._events.append((event, {"type": event, **data}))

    def text(self, *pieces: str) -> Self:
        """A text block streamed as ``pieces``."""
        index = self._blocks
        self._blocks += 1
        self._add(
            "content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}
        )
        for piece in pieces:
            self._add(
                "content_block_delta",
                {"index": index, "delta": {"type": "text_delta", "text": piece}},
            )
            self._output_tokens += 1
        self._add("content_block_stop", {"index": index})
        return self

    def tool_use(
        self,
        call_id: str | int,
        name: str | int,
        tool_input: dict[str, Any] | str,
        *,
        pieces: int = 3,
        keep: int | None = None,
    ) -> Self:
        """A tool_use block whose input JSON arrives in ``pieces`` deltas; ``keep`` sends only
        that many characters of it, as when max_tokens cuts the input off. An id or a name
        that is not a string is sent as it is, as a broken gateway might."""
        index = self._blocks
        self._blocks += 1
        raw = tool_input if isinstance(tool_input, str) else json.dumps(tool_input)
        if keep is not None:
            raw = raw[:keep]
        self._add(
            "content_block_start",
            {
                "index": index,
                "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
            },
        )
        # The API opens each input stream with an empty partial_json.
        self._add(
            "content_block_delta",
            {"index": index, "delta": {"type": "input_json_delta", "partial_json": ""}},
        )
        size = max(1, -(-len(raw) // pieces))
        for start in range(0, len(raw), size):
            self._add(
                "content_block_delta",
                {
                    "index": index,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": raw[start : start + size],
                    },
                },
            )
            self._output_tokens += 1
        self._add("content_block_stop", {"index": index})
        return self

    def thinking(self, text: str) -> Self:
        """A thinking block, which adapters that don't ask for it must ignore."""
        index = self._blocks
        self._blocks += 1
        self._add(
            "content_block_start",
            {"index": index, "content_block": {"type": "thinking", "thinking": ""}},
        )
        self._add(
            "content_block_delta",
            {"index": index, "delta": {"type": "thinking_delta", "thinking": text}},
        )
        self._add(
            "content_block_delta",
            {"index": index, "delta": {"type": "signature_delta", "signature": "c2ln"}},
        )
        self._add("content_block_stop", {"index": index})
        return self

    def ping(self) -> Self:
        self._add("ping", {})
        return self

    def error(self, error_type: str = "overloaded_error", message: str = "Overloaded") -> Self:
        """The in-stream error event; the real API ends the stream after it."""
        self._events.append(
            ("error", {"type": "error", "error": {"type": error_type, "message": message}})
        )
        return self

    def stop(self, stop_reason: str = "end_turn", *, output_tokens: int | None = None) -> Self:
        """message_delta with the stop reason and cumulative usage, then message_stop."""
        tokens = self._output_tokens if output_tokens is None else output_tokens
        self._add(
            "message_delta",
            {
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": tokens},
            },
        )
        self._add("message_stop", {})
        return self

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return list(self._events)

    def body(self, line_end: str = "\n") -> bytes:
        return "".join(sse(name, data, line_end) for name, data in self._events).encode()

    def reply(self, *, line_end: str = "\n", **chunking: Any) -> StreamReply:
        """The stream as a scripted reply; ``chunking`` as :class:`StreamReply` takes it."""
        return StreamReply(self.body(line_end), **chunking)
