"""OpenAI-compatible Chat Completions, streamed: OpenAI, OpenRouter and custom servers.

The endpoint follows the OpenAI SDKs' ``base_url`` convention, which already holds
the API version: ``POST {base_url}/chat/completions`` for ``https://api.openai.com/v1``,
``https://openrouter.ai/api/v1``, ``http://localhost:11434/v1`` (Ollama),
``http://localhost:8000/v1`` (vLLM) or ``http://localhost:1234/v1`` (LM Studio). A
base URL that is a bare origin (``http://localhost:11434``) gets ``/v1`` added.

The key goes in ``Authorization: Bearer``; a custom server may have none. The
request asks for ``stream_options.include_usage``, so the last chunk before
``data: [DONE]`` carries usage with empty ``choices``. Tool calls stream as
``tool_calls`` fragments keyed by ``index``, the first carrying ``id`` and name;
fragments are matched by ``id`` whenever one is present, because some servers
(Ollama) omit the index or reuse index 0 for every call. OpenRouter's keep-alive
comments (``: OPENROUTER PROCESSING``) are skipped by the SSE parser, and its
in-stream error (a chunk with ``error`` and ``finish_reason: "error"``) ends the
stream as a ``Failed`` event.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

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
    StreamToolCallFinished,
    StreamToolCallStarted,
    ToolCallArgumentsDelta,
    ToolCallInvalid,
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

Flavour = Literal["openai", "openrouter", "custom"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
_LABELS: dict[Flavour, str] = {
    "openai": "OpenAI",
    "openrouter": "OpenRouter",
    "custom": "the custom provider",
}

_KIND_OF_CODE: dict[str, ProviderErrorKind] = {
    "invalid_api_key": "authentication",
    "insufficient_quota": "quota",  # a 429 that waiting won't fix
    "rate_limit_exceeded": "rate_limited",
    "model_not_found": "not_found",
    "server_error": "server_error",
    "overloaded": "overloaded",
}

# How much of a name or a stop reason from elsewhere an error message or event shows.
MAX_LABEL_CHARS = 60
MAX_RAW_STOP_REASON_CHARS = 40

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def chat_completions_url(base_url: str) -> str:
    """The endpoint for ``base_url``: ``/chat/completions`` after it, or ``/v1/...`` after a
    bare origin."""
    base = base_url.rstrip("/")
    if urlsplit(base).path in ("", "/"):
        return base + "/v1/chat/completions"
    return base + "/chat/completions"


class OpenAIProvider:
    """Streams replies from an OpenAI-compatible Chat Completions endpoint.

    ``flavour`` picks the defaults: ``openai`` and ``openrouter`` need a key and have
    a default ``base_url``; ``custom`` needs a ``base_url`` and may have no key.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        flavour: Flavour = "openai",
        api_key: str | None,
        base_url: str | None = None,
        label: str | None = None,
        http: HttpOptions | None = None,
    ) -> None:
        if base_url is None:
            if flavour == "custom":
                raise ValueError("a custom provider needs a base_url")
            base_url = OPENAI_BASE_URL if flavour == "openai" else OPENROUTER_BASE_URL
        self._session = session
        self._wire = ChatCompletionsWire(
            flavour=flavour,
            api_key=api_key,
            base_url=base_url,
            label=label or _LABELS[flavour],
        )
        self._http = http or HttpOptions()

    def stream(self, request: ModelRequest) -> ModelStream:
        """The reply to ``request``, as a stream of events (see :class:`ModelStream`)."""
        return ModelStream(self._session, self._wire, request, self._http)


@dataclass(frozen=True)
class ChatCompletionsWire:
    """Chat Completions' wire format (a :class:`.stream.WireFormat`)."""

    flavour: Flavour
    api_key: str | None = field(repr=False)
    base_url: str
    label: str

    def __post_init__(self) -> None:
        # The label goes into every error a person reads: never the key, never a page of it.
        object.__setattr__(self, "label", redacted(self.label, self.api_key, limit=MAX_LABEL_CHARS))

    @property
    def url(self) -> str:
        return chat_completions_url(self.base_url)

    def prepare(self, request: ModelRequest) -> PreparedRequest:
        if not self.api_key and self.flavour != "custom":
            raise ProviderError("no_key", f"no API key is set for {self.label}")
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(render_messages(request.messages))
        body: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        # OpenAI deprecated max_tokens (its reasoning models refuse it); the
        # compatible servers know only max_tokens.
        limit = "max_completion_tokens" if self.flavour == "openai" else "max_tokens"
        body[limit] = request.max_tokens
        if request.tools:
            body["tools"] = render_tools(request.tools)
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return PreparedRequest(self.url, headers, body)

    def decoder(self) -> ChatCompletionsDecoder:
        return ChatCompletionsDecoder(self)

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
        """The error of ``{"error": {"message", "type", "code"}}`` (OpenAI, OpenRouter,
        Ollama), ``{"error": "..."}`` (Ollama's own) or ``{"object": "error", ...}`` (vLLM)."""
        if not isinstance(document, dict):
            return None
        error = document.get("error")
        if isinstance(error, str):
            error = {"message": error}
        elif not isinstance(error, dict):
            if document.get("object") != "error":
                return None
            error = document
        code = error.get("code")
        kind: ProviderErrorKind
        if isinstance(code, int) and code >= 400:
            kind = kind_for_status(code)  # OpenRouter's numeric codes are HTTP statuses
        elif isinstance(code, str) and code in _KIND_OF_CODE:
            kind = _KIND_OF_CODE[code]
        elif status == 200:
            kind = "server_error"
        else:
            kind = kind_for_status(status)
        detail = str(error.get("message") or error.get("type") or "no message")
        metadata = error.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("raw"), str):
            detail += f" ({metadata['raw']})"  # OpenRouter: the upstream provider's words
        return ProviderError(
            kind,
            provider_message(self.label, status, detail, self.api_key),
            status=status if status != 200 else None,
            retry_after=retry_after,
        )

    def redact(self, text: str) -> str:
        return redacted(text, self.api_key)


class ChatCompletionsDecoder:
    """The events of one Chat Completions stream."""

    def __init__(self, wire: ChatCompletionsWire) -> None:
        self._wire = wire
        self._calls: list[PendingCall] = []
        self._by_id: dict[str, PendingCall] = {}
        self._by_index: dict[int, PendingCall] = {}
        self._last: PendingCall | None = None
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    @property
    def usage(self) -> Usage | None:
        return self._usage

    def feed(self, event: SSEEvent) -> Iterable[StreamEvent]:
        data = event.data.strip()
        if data == "[DONE]":
            self._done = True
            return ()
        if not data:
            return ()
        label = self._wire.label
        try:
            chunk = read_json(data)
        except (ValueError, RecursionError):
            raise ProviderError(
                "malformed_stream", f"{label} sent a chunk that is not JSON"
            ) from None
        if not isinstance(chunk, dict):
            raise ProviderError("malformed_stream", f"{label} sent a chunk that is not an object")
        error = self._wire.error_from_document(chunk, 200, None)
        if error is not None:
            raise error
        try:
            return self._chunk(chunk)
        except (KeyError, TypeError, AttributeError, ValueError):
            raise ProviderError(
                "malformed_stream", f"{label} sent a chunk of an unexpected shape"
            ) from None

    def _chunk(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = _usage(usage)
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # only one choice is asked for
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                events.append(StreamTextDelta(content))
            for fragment in delta.get("tool_calls") or ():
                events.extend(self._tool_call(fragment))
            finish = choice.get("finish_reason")
            if finish == "error":
                raise ProviderError("server_error", f"{self._wire.label} failed mid-reply")
            if finish:
                if not isinstance(finish, str):
                    raise ValueError("a finish_reason is a string")
                self._finish_reason = redacted(finish, None, limit=MAX_RAW_STOP_REASON_CHARS)
        return events

    def _tool_call(self, fragment: dict[str, Any]) -> list[StreamEvent]:
        call_id = fragment.get("id") or None
        index = fragment.get("index")
        function = fragment.get("function") or {}
        name = function.get("name")
        if not isinstance(call_id, str | None) or not isinstance(name, str | None):
            raise ProviderError(
                "malformed_stream",
                f"{self._wire.label} sent a tool call whose id or name is not a string",
            )
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)  # some servers send an object, not its text
        if call_id is not None:
            call = self._by_id.get(call_id)
        elif isinstance(index, int):
            call = self._by_index.get(index)
        else:
            call = self._last
        events: list[StreamEvent] = []
        if call is None:
            call = PendingCall(call_id or f"call_{uuid.uuid4().hex[:24]}", name or "")
            self._calls.append(call)
            self._by_id[call.id] = call
            events.append(StreamToolCallStarted(call.id, call.name))
        if isinstance(index, int):
            self._by_index[index] = call
        self._last = call
        if name and not call.name:
            call.name = name
        if isinstance(arguments, str) and arguments:
            call.fragments.append(arguments)
            events.append(ToolCallArgumentsDelta(call.id, arguments))
        return events

    def end(self) -> Iterable[StreamEvent]:
        if not self._done and self._finish_reason is None:
            raise ProviderError(
                "network", f"the {self._wire.label} stream ended before the reply was complete"
            )
        raw = self._finish_reason or "stop"
        verdicts = [call.verdict(cut_off=raw == "length") for call in self._calls]
        stop = _STOP_REASONS.get(raw, "other")
        if stop == "end_turn" and any(
            isinstance(verdict, StreamToolCallFinished | ToolCallInvalid) for verdict in verdicts
        ):
            stop = "tool_use"  # Ollama and others finish a tool call with "stop"
        return [*verdicts, self._usage or Usage(0, 0), Finished(stop, raw)]


def render_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as Chat Completions takes them: functions with JSON Schema parameters."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


IMAGES_NOT_SHOWN = (
    "(The images this result describes are not shown: tool results reach this model as text.)"
)


def render_messages(
    messages: Sequence[UserMessage | AssistantMessage | ToolResult],
) -> list[dict[str, Any]]:
    """The transcript as Chat Completions ``messages`` (the system prompt not included).

    The wire format has no error flag on a tool message, so an error result says so
    in its text.
    """
    rendered: list[dict[str, Any]] = []
    wire_ids = WireIds()
    for message in messages:
        if isinstance(message, UserMessage):
            text = message.delivered_text()
            if not message.images:
                rendered.append({"role": "user", "content": text})
                continue
            parts: list[dict[str, Any]] = [
                {"type": "image_url", "image_url": {"url": f"data:{i.media_type};base64,{i.data}"}}
                for i in message.images
            ]
            rendered.append({"role": "user", "content": [{"type": "text", "text": text}, *parts]})
        elif isinstance(message, AssistantMessage):
            if not message.text and not message.tool_calls:
                continue
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": wire_ids.of_call(call),
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                    for call in message.tool_calls
                ]
            rendered.append(entry)
        else:
            content = f"Error: {message.content}" if message.is_error else message.content
            if message.images:
                # A tool message is text only here: the images stay described.
                content = f"{content}\n{IMAGES_NOT_SHOWN}"
            rendered.append(
                {"role": "tool", "tool_call_id": wire_ids.of_result(message), "content": content}
            )
    return rendered


def _usage(usage: dict[str, Any]) -> Usage:
    """A usage object's counts: cached input under ``prompt_tokens_details`` and reasoning
    under ``completion_tokens_details``, where the server gives them."""
    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    prompt = prompt if isinstance(prompt, dict) else {}
    completion = completion if isinstance(completion, dict) else {}
    return Usage(
        input_tokens=token_count(usage.get("prompt_tokens")),
        output_tokens=token_count(usage.get("completion_tokens")),
        cache_read_tokens=token_count(prompt.get("cached_tokens")),
        reasoning_tokens=token_count(completion.get("reasoning_tokens")),
    )
