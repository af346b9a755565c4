"""A local OpenAI-compatible Chat Completions API, streamed, scripted per test.

Three flavours, each at its real path and with its own error bodies:

* ``openai``: ``POST /v1/chat/completions``; ``{"error": {"message", "type", "param",
  "code"}}``; 401 ``invalid_api_key`` for a wrong key.
* ``openrouter``: ``POST /api/v1/chat/completions``; ``{"error": {"code": <status>,
  "message"}}``; the stream may carry ``: OPENROUTER PROCESSING`` comments and an
  in-stream error chunk (``error`` with ``finish_reason: "error"``).
* ``ollama``: ``POST /v1/chat/completions`` without a key; tool calls arrive whole,
  in one chunk, with the index omitted or reused (see :meth:`ChunkStream.tool_call`).

Every flavour refuses an assistant message with ``tool_calls`` that is not followed
by a tool message for each id, and a tool message that answers no call. The usage
chunk (empty ``choices``) is sent only when the request asked for it with
``stream_options.include_usage``, as the real API does.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Self

from aiohttp import web

from tests.support.fakes.server import (
    ErrorReply,
    FakeProviderServer,
    RecordedRequest,
    StreamReply,
    sse,
)

Flavour = Literal["openai", "openrouter", "ollama"]
API_KEY = "sk-fake-openai-0123456789abcdef"


def openai_error(
    status: int,
    message: str,
    *,
    flavour: Flavour = "openai",
    error_type: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> ErrorReply:
    """An error reply in the flavour's shape."""
    if flavour == "openrouter":
        body: dict[str, Any] = {"error": {"code": status, "message": message}}
    else:
        body = {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    return ErrorReply(status, body, headers or {})


class FakeChatCompletions(FakeProviderServer):
    """Chat Completions on loopback; ``base_url`` is what an OpenAI SDK would be given."""

    def __init__(
        self,
        *,
        flavour: Flavour = "openai",
        api_key: str | None = API_KEY,
        latency: float = 0.001,
    ) -> None:
        super().__init__(latency=latency)
        self.flavour = flavour
        self.api_key = None if flavour == "ollama" else api_key
        self.path = (
            "/api/v1/chat/completions" if flavour == "openrouter" else "/v1/chat/completions"
        )

    @property
    def base_url(self) -> str:
        return self.origin + self.path.removesuffix("/chat/completions")

    def _refuse(self, status: int, message: str, **fields: Any) -> web.Response:
        error = openai_error(status, message, flavour=self.flavour, **fields)
        return web.json_response(error.body, status=status)

    def models(self) -> dict[str, Any]:
        owner = {"openai": "openai", "openrouter": "openai", "ollama": "library"}[self.flavour]
        model = {"id": "gpt-fake", "object": "model", "created": 1700000000, "owned_by": owner}
        return {"object": "list", "data": [model]}

    def refusal(self, request: RecordedRequest) -> web.Response | None:
        refused = self.key_refusal(request)
        if refused is not None:
            return refused
        problem = _body_problem(request.body)
        if problem is not None:
            message, param = problem
            return self._refuse(400, message, param=param)
        return None

    def key_refusal(self, request: RecordedRequest) -> web.Response | None:
        if self.api_key is not None:
            authorization = request.headers.get("authorization", "")
            if not authorization.startswith("Bearer "):
                if self.flavour == "openrouter":
                    return self._refuse(401, "No auth credentials found")
                return self._refuse(
                    401,
                    "You didn't provide an API key. You need to provide your API key in an"
                    " Authorization header using Bearer auth (i.e. Authorization: Bearer"
                    " YOUR_KEY).",
                )
            key = authorization.removeprefix("Bearer ")
            if key != self.api_key:
                if self.flavour == "openrouter":
                    return self._refuse(401, "User not found.")
                masked = f"{key[:3]}{'*' * 4}{key[-4:]}" if len(key) > 8 else "****"
                return self._refuse(
                    401,
                    f"Incorrect API key provided: {masked}. You can find your API key at"
                    " https://platform.openai.com/account/api-keys.",
                    code="invalid_api_key",
                )
        return None


def _body_problem(body: Any) -> tuple[str, str | None] | None:
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request.", None
    for name in ("model", "messages"):
        if name not in body:
            return f"Missing required parameter: '{name}'.", name
    if body.get("stream") is not True:
        return "stream: this fake serves streams only", "stream"
    for index, tool in enumerate(body.get("tools") or ()):
        if tool.get("type") != "function" or "name" not in (tool.get("function") or {}):
            return f"Missing required parameter: 'tools[{index}].function'.", None
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'", "messages"
    waiting: list[str] = []  # ids of the last tool_calls still without a tool message
    answerable: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in answerable:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a"
                    " preceeding message with 'tool_calls'.",
                    f"messages.[{index}].role",
                )
            answerable.discard(call_id)
            waiting = [i for i in waiting if i != call_id]
            continue
        if waiting:
            return _calls_without_results(waiting, index)
        answerable = set()
        if role not in ("system", "developer", "user", "assistant"):
            return f"Invalid value: '{role}'.", f"messages[{index}].role"
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                return (
                    "Invalid value for 'content': expected a string, got null.",
                    f"messages.[{index}].content",
                )
            for call in calls:
                function = call.get("function") or {}
                if not isinstance(function.get("arguments"), str) or "name" not in function:
                    return (
                        f"Missing required parameter: 'messages[{index}].tool_calls.function'.",
                        None,
                    )
            waiting = [call["id"] for call in calls]
            answerable = set(waiting)
    if waiting:
        return _calls_without_results(waiting, len(messages))
    return None


def _calls_without_results(ids: list[str], index: int) -> tuple[str, str]:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding"
        " to each 'tool_call_id'. The following tool_call_ids did not have response messages:"
        f" {', '.join(ids)}",
        f"messages.[{index}].role",
    )


class ChunkStream:
    """The chunks of one streamed completion, written in order by chained calls.

    Example: ``ChunkStream().text("Hi").tool_call("call_1", "read", {}).finish("tool_calls")
    .usage(10, 3).done()``.
    """

    def __init__(self, *, model: str = "gpt-fake", provider: str | None = None) -> None:
        self._model = model
        self._provider = provider  # OpenRouter names the upstream provider in each chunk
        self._items: list[tuple[str, Any]] = []
        self._started = False

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> Self:
        self._items.append(("chunk", {"delta": delta, "finish_reason": finish_reason}))
        return self

    def role(self) -> Self:
        """The first chunk, which names the role (the real API sends it before any content)."""
        return self._chunk({"role": "assistant", "content": ""})

    def comment(self, text: str = "OPENROUTER PROCESSING") -> Self:
        self._items.append(("comment", text))
        return self

    def text(self, *pieces: str) -> Self:
        for piece in pieces:
            self._chunk({"content": piece})
        return self

    def tool_call(
        self,
        call_id: str | int | None,
        name: str | int,
        arguments: dict[str, Any] | str,
        *,
        index: int | None = 0,
        pieces: int = 3,
        whole: bool = False,
    ) -> Self:
        """A tool call. By default as OpenAI streams it: a first fragment with ``id``, name
        and empty arguments, then the arguments in ``pieces`` fragments keyed by ``index``.
        ``whole`` sends it as Ollama does, in one fragment; ``index=None`` leaves the
        index out. An id or a name that is not a string is sent as it is."""
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)

        def fragment(**fields: Any) -> dict[str, Any]:
            return {"index": index, **fields} if index is not None else dict(fields)

        head: dict[str, Any] = {"type": "function"}
        if call_id is not None:
            head["id"] = call_id
        if whole:
            self._chunk(
                {"tool_calls": [fragment(**head, function={"name": name, "arguments": raw})]}
            )
            return self
        self._chunk({"tool_calls": [fragment(**head, function={"name": name, "arguments": ""})]})
        size = max(1, -(-len(raw) // pieces))
        for start in range(0, len(raw), size):
            self._chunk(
                {"tool_calls": [fragment(function={"arguments": raw[start : start + size]})]}
            )
        return self

    def finish(self, reason: str = "stop") -> Self:
        return self._chunk({}, reason)

    def usage(
        self, prompt_tokens: int, completion_tokens: int, *, cached: int = 0, reasoning: int = 0
    ) -> Self:
        """The usage chunk; ``cached`` and ``reasoning`` go in its details, as OpenAI sends."""
        self._items.append(("usage", (prompt_tokens, completion_tokens, cached, reasoning)))
        return self

    def error(self, message: str, code: int | str = "server_error") -> Self:
        """OpenRouter's in-stream error: a chunk with ``error`` and ``finish_reason: "error"``."""
        self._items.append(("error", {"code": code, "message": message}))
        return self

    def raw(self, text: str) -> Self:
        """Event-stream text as it is, e.g. a broken line."""
        self._items.append(("raw", text))
        return self

    def done(self) -> Self:
        self._items.append(("raw", "data: [DONE]\n\n"))
        return self

    def body(self, request: RecordedRequest) -> bytes:
        """The stream's bytes for ``request`` (usage only if it asked for usage)."""
        options = (request.body or {}).get("stream_options") or {}
        include_usage = options.get("include_usage") is True
        out: list[str] = []
        for kind, value in self._items:
            if kind == "comment":
                out.append(f": {value}\n\n")
            elif kind == "raw":
                out.append(value)
            elif kind == "chunk":
                choice = {
                    "index": 0,
                    "delta": value["delta"],
                    "logprobs": None,
                    "finish_reason": value["finish_reason"],
                }
                out.append(sse(None, self._envelope([choice], include_usage)))
            elif kind == "usage" and include_usage:
                prompt, completion, cached, reasoning = value
                chunk = self._envelope([], include_usage)
                chunk["usage"] = {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached},
                    "completion_tokens_details": {"reasoning_tokens": reasoning},
                }
                out.append(sse(None, chunk))
            elif kind == "error":
                choice = {"index": 0, "delta": {"content": ""}, "finish_reason": "error"}
                chunk = self._envelope([choice], include_usage=False)
                chunk["error"] = value
                out.append(sse(None, chunk))
        return "".join(out).encode()

    def _envelope(self, choices: list[dict[str, Any]], include_usage: bool) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self._model,
            "system_fingerprint": "fp_fake",
            "choices": choices,
        }
        if self._provider is not None:
            chunk["provider"] = self._provider
        if include_usage:
            chunk["usage"] = None
        return chunk

    def reply(self, **chunking: Any) -> StreamReply:
        """The stream as a scripted reply; ``chunking`` as :class:`StreamReply` takes it."""
        return StreamReply(self.body, **chunking)
