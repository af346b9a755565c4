"""One streamed model reply over HTTP, the same for every wire format.

An adapter (:mod:`.anthropic`, :mod:`.openai`) supplies a :class:`WireFormat`: how
to build the request, how to read its error bodies, and a :class:`StreamDecoder`
that turns server-sent events into :mod:`.events`. :class:`ModelStream` does the
rest: the POST, timeouts, the event-stream parsing, retries, and turning every
failure into one final ``Failed`` event. Usage::

    provider = AnthropicProvider(session, api_key=key)
    async with provider.stream(ModelRequest(model=..., messages=transcript, tools=specs)) as s:
        async for event in s:
            match event:
                case StreamTextDelta(text):
                    show(text)
                case Failed(error):
                    ...  # error.kind, error.message (no key in it), error.started
    transcript.append(s.reply.message())  # dropped calls left out, invalid ones kept

Nothing is logged but the provider's label, the model, the attempt and the
outcome: never the key, the request body or the reply.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

import aiohttp

from server.common.clock import Clock, SystemClock
from server.host.agents.providers.errors import ProviderError, kind_for_status, redacted
from server.host.agents.providers.events import (
    Failed,
    Finished,
    StopReason,
    StreamEvent,
    StreamTextDelta,
    StreamToolCallFinished,
    ToolCallDropped,
    ToolCallInvalid,
    Usage,
)
from server.host.agents.providers.retry import RetryPolicy, retry_after_seconds
from server.host.agents.providers.sse import SSEError, SSEEvent, SSEParser
from server.host.agents.providers.transcript import (
    AssistantMessage,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
)

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]

# How much of an error body is read: enough for any provider's message.
MAX_ERROR_BODY_BYTES = 64 * 1024
# How much of the HTTP reason phrase an error message shows.
MAX_REASON_CHARS = 100
# Server-sent events that only keep the connection open (Anthropic's); comments
# (OpenRouter's ": OPENROUTER PROCESSING") never become events at all.
KEEP_ALIVE_EVENTS = frozenset({"ping"})


@dataclass(frozen=True)
class ModelRequest:
    """One request for a reply: the model, the transcript so far, the system prompt and tools.

    The transcript must be valid (see :func:`.transcript.close_dangling_calls`).
    """

    model: str
    messages: Sequence[UserMessage | AssistantMessage | ToolResult]
    system: str = ""
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 4096


@dataclass(frozen=True)
class HttpOptions:
    """How an adapter talks HTTP: timeouts, retries, and the waits tests replace.

    ``connect_timeout`` bounds opening the connection; ``read_timeout`` bounds the
    silence before the response and between any two chunks of it; ``progress_timeout``
    bounds the time between two events that carry something, so a provider that only
    sends keep-alives (comments, ``ping`` events) cannot hold a reply open for ever.
    ``clock`` reads the wall clock for ``retry-after`` dates; ``monotonic`` measures
    the time without progress; ``sleep`` waits between attempts.
    """

    connect_timeout: float = 10.0
    read_timeout: float = 90.0
    progress_timeout: float = 300.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Sleep = asyncio.sleep
    clock: Clock = field(default_factory=SystemClock)
    rng: random.Random = field(default_factory=random.Random)
    monotonic: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class PreparedRequest:
    """The HTTP request an adapter built; ``headers`` carry the key, so never log them."""

    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


class StreamDecoder(Protocol):
    """Turns one response's server-sent events into stream events (one per attempt)."""

    @property
    def done(self) -> bool:
        """The wire format's end marker arrived; the rest of the body is not read."""
        ...

    def feed(self, event: SSEEvent) -> Iterable[StreamEvent]:
        """The events one server-sent event yields; raises ProviderError for an error."""
        ...

    def end(self) -> Iterable[StreamEvent]:
        """The closing events at the end of the body; raises ProviderError if incomplete."""
        ...

    @property
    def usage(self) -> Usage | None:
        """The tokens the provider counted so far in this response (None: none reported)."""
        ...


class WireFormat(Protocol):
    """What an adapter knows of its provider's wire format."""

    @property
    def label(self) -> str:
        """The provider's name as a person reads it in an error: "Anthropic", "OpenRouter"."""
        ...

    def prepare(self, request: ModelRequest) -> PreparedRequest:
        """The HTTP request; raises ProviderError (``no_key``) when it cannot be sent."""
        ...

    def decoder(self) -> StreamDecoder: ...

    def error_from_body(
        self, status: int, body: bytes, retry_after: float | None
    ) -> ProviderError | None:
        """The provider's own error in a response body, or None when there is none."""
        ...

    def redact(self, text: str) -> str:
        """``text`` without the key in it."""
        ...


class ModelProvider(Protocol):
    """Anything that streams model replies: each adapter, and the turn loop's test doubles."""

    def stream(self, request: ModelRequest) -> ModelStream: ...


class ModelReply:
    """What a stream delivered so far, folded: the assistant message to keep, and more."""

    def __init__(self) -> None:
        self.text_parts: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.invalid_calls: list[ToolCallInvalid] = []
        self.dropped_calls: list[ToolCallDropped] = []
        self.usage = Usage(0, 0)
        self.stop_reason: StopReason | None = None
        self.error: ProviderError | None = None

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def add(self, event: StreamEvent) -> None:
        match event:
            case StreamTextDelta(text):
                self.text_parts.append(text)
            case StreamToolCallFinished(call_id, name, arguments):
                self.tool_calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
            case ToolCallInvalid(call_id, name, _, _):
                self.invalid_calls.append(event)
                # Kept with empty arguments, so the loop answers it and the model retries.
                self.tool_calls.append(ToolCall(id=call_id, name=name))
            case ToolCallDropped():
                self.dropped_calls.append(event)
            case Usage():
                self.usage = event
            case Finished(stop_reason, _):
                self.stop_reason = stop_reason
            case Failed(error):
                self.error = error
            case _:
                pass

    def message(self) -> AssistantMessage:
        """The reply as a transcript message: its text and every call but dropped ones."""
        return AssistantMessage(text=self.text, tool_calls=tuple(self.tool_calls))


class ModelStream:
    """One model reply as an async iterator of :data:`.events.StreamEvent`.

    It never raises to its consumer: every failure, from a refused key to a broken
    connection, becomes a final ``Failed`` event. Iterate it once; use it as an
    async context manager (or call :meth:`aclose`) so that leaving early releases
    the connection at once. :attr:`reply` folds the events delivered so far.

    Retries (see :class:`.retry.RetryPolicy`) happen inside, and only while nothing
    has been delivered: once an event has reached the consumer, a retryable failure
    ends the stream with ``Failed(error)`` where ``error.started`` is true, and the
    turn loop decides whether to discard the partial reply and ask again.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        wire: WireFormat,
        request: ModelRequest,
        http: HttpOptions,
    ) -> None:
        self._session = session
        self._wire = wire
        self._request = request
        self._http = http
        self.reply = ModelReply()
        self._events = self._delivered()
        self._iterated = False
        # Tokens counted by failed attempts, and the decoder of the attempt under way.
        self._spent: Usage | None = None
        self._decoder: StreamDecoder | None = None

    @property
    def counted(self) -> Usage | None:
        """The tokens the provider counted so far, over every attempt (None: none reported).

        After a ``Usage`` or ``Failed`` event it is what that event told; read it when a
        stream is left early (a cancelled turn) to record what was spent.
        """
        current = self._decoder.usage if self._decoder is not None else None
        return _sum_usage(self._spent, current)

    @property
    def spent(self) -> Usage:
        """What the request cost as far as the provider told: ``counted``, 0 for nothing."""
        return self.counted or Usage(0, 0)

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        if self._iterated:
            raise RuntimeError("a ModelStream is read once")
        self._iterated = True
        return self._events

    async def aclose(self) -> None:
        """Stops the stream and releases its connection; safe to call twice."""
        await self._events.aclose()

    async def __aenter__(self) -> ModelStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _delivered(self) -> AsyncGenerator[StreamEvent, None]:
        delivered = False
        async with aclosing(self._with_retries()) as events:
            async for event in events:
                try:
                    self.reply.add(event)
                except Exception:
                    # A decoder let through what the reply cannot hold; never raise to the consumer.
                    log.exception("model reply: %s sent an event of a bad shape", self._wire.label)
                    failed = Failed(
                        ProviderError(
                            "malformed_stream",
                            f"{self._wire.label} sent a reply this server could not read",
                            started=delivered,
                        ),
                        self.counted,
                    )
                    self.reply.add(failed)
                    yield failed
                    return
                delivered = True
                yield event

    async def _with_retries(self) -> AsyncGenerator[StreamEvent, None]:
        label, model = self._wire.label, self._request.model
        try:
            prepared = self._wire.prepare(self._request)
        except ProviderError as error:
            yield Failed(error)
            return
        attempt, waited = 0, 0.0
        while True:
            attempt += 1
            delivered = False
            log.info("model request: %s model=%s attempt=%d", label, model, attempt)
            decoder = self._decoder = self._wire.decoder()
            try:
                async with aclosing(self._attempt(prepared, decoder)) as events:
                    async for event in events:
                        delivered = True
                        if isinstance(event, Usage):
                            # What earlier, failed attempts were charged counts too.
                            event = _sum_usage(self._spent, event) or event
                        yield event
                log.info("model reply: %s model=%s complete", label, model)
                return
            except ProviderError as error:
                if delivered:
                    log.warning(
                        "model reply: %s model=%s failed after it started (%s)",
                        label,
                        model,
                        error.kind,
                    )
                    yield Failed(error.after_delivery(), self.counted)
                    return
                delay = self._http.retry.delay_before_retry(error, attempt, waited, self._http.rng)
                if delay is None:
                    log.warning(
                        "model request: %s model=%s failed (%s, status %s)",
                        label,
                        model,
                        error.kind,
                        error.status,
                    )
                    yield Failed(error, self.counted)
                    return
                self._spent, self._decoder = self.counted, None
                log.warning(
                    "model request: %s model=%s %s (status %s); retrying in %.1fs",
                    label,
                    model,
                    error.kind,
                    error.status,
                    delay,
                )
                await self._http.sleep(delay)
                waited += delay

    async def _attempt(
        self, prepared: PreparedRequest, decoder: StreamDecoder
    ) -> AsyncGenerator[StreamEvent, None]:
        """One POST and its stream; every failure is raised as a ProviderError."""
        http, label = self._http, self._wire.label
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=http.connect_timeout, sock_read=http.read_timeout
        )
        try:
            async with self._session.post(
                prepared.url,
                data=json.dumps(prepared.body).encode(),
                headers=dict(prepared.headers),
                timeout=timeout,
                allow_redirects=False,
            ) as response:
                await self._check_response(response)
                parser = SSEParser()
                progressed_at = http.monotonic()
                async for chunk in response.content.iter_any():
                    for sse in parser.feed(chunk):
                        if sse.event not in KEEP_ALIVE_EVENTS:
                            progressed_at = http.monotonic()
                        for event in decoder.feed(sse):
                            yield event
                        if decoder.done:
                            break
                    if decoder.done:
                        break
                    if http.monotonic() - progressed_at > http.progress_timeout:
                        raise ProviderError(
                            "timeout",
                            f"{label} sent only keep-alives for"
                            f" {http.progress_timeout:g}s and no reply",
                        )
                else:
                    for sse in parser.finish():
                        for event in decoder.feed(sse):
                            yield event
                for event in decoder.end():
                    yield event
        except ProviderError:
            raise
        except SSEError as error:
            raise ProviderError(
                "malformed_stream", f"{label} sent a broken stream: {error}"
            ) from None
        except aiohttp.ConnectionTimeoutError:
            raise ProviderError(
                "timeout", f"{label} did not accept a connection within {http.connect_timeout:g}s"
            ) from None
        except (aiohttp.SocketTimeoutError, TimeoutError):
            raise ProviderError(
                "timeout", f"{label} sent nothing for {http.read_timeout:g}s"
            ) from None
        except aiohttp.ClientPayloadError:
            raise ProviderError(
                "network", f"the connection to {label} broke in the middle of the reply"
            ) from None
        except aiohttp.ClientConnectorError as error:
            raise ProviderError(
                "network",
                f"could not connect to {label} at {error.host}:{error.port}"
                f" ({error.os_error.strerror or error.os_error})",
            ) from None
        except aiohttp.ClientError as error:
            reason = self._wire.redact(str(error) or type(error).__name__)
            raise ProviderError("network", f"the request to {label} failed: {reason}") from None
        except Exception:
            # A bug here must not break the promise that consumers never see an exception.
            log.exception("model reply: %s could not be read", label)
            raise ProviderError(
                "malformed_stream", f"{label} sent a reply this server could not read"
            ) from None

    async def _check_response(self, response: aiohttp.ClientResponse) -> None:
        """Raises the provider's error for a refusal or an answer that is not a stream."""
        label = self._wire.label
        content_type = response.headers.get("Content-Type", "")
        if response.status == 200 and "application/json" not in content_type:
            return
        body = await read_capped(response.content, MAX_ERROR_BODY_BYTES)
        retry_after = retry_after_seconds(response.headers, self._http.clock.now())
        error = self._wire.error_from_body(response.status, body, retry_after)
        if error is not None:
            raise error
        if response.status == 200:
            raise ProviderError(
                "malformed_stream",
                f"{label} answered with a JSON document instead of an event stream",
            )
        reason = redacted(self._wire.redact(response.reason or ""), None, limit=MAX_REASON_CHARS)
        raise _status_error(label, response.status, reason, retry_after)


async def read_capped(content: aiohttp.StreamReader, limit: int) -> bytes:
    """A body up to its end or ``limit`` bytes, however many chunks it arrives in."""
    parts: list[bytes] = []
    size = 0
    while size < limit:
        part = await content.read(limit - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _sum_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Both counts added (None when neither has one)."""
    if first is None or second is None:
        return first or second
    return Usage(
        first.input_tokens + second.input_tokens,
        first.output_tokens + second.output_tokens,
        first.cache_read_tokens + second.cache_read_tokens,
        first.cache_write_tokens + second.cache_write_tokens,
        first.reasoning_tokens + second.reasoning_tokens,
    )


def _status_error(label: str, status: int, reason: str, retry_after: float | None) -> ProviderError:
    return ProviderError(
        kind_for_status(status),
        f"{label} answered {status} {reason}".rstrip(),
        status=status,
        retry_after=retry_after,
    )


def provider_message(label: str, status: int, detail: str, secret: str | None) -> str:
    """A readable message for an error the provider explained in its body."""
    what = {
        401: "refused the API key",
        402: "says the account is out of credits",
        403: "does not allow this request",
        404: "does not know this model or endpoint",
        429: "is rate limiting requests",
        529: "is overloaded",
    }.get(status)
    if what is None:
        what = "refused the request" if 400 <= status < 500 else "failed"
    text = f"{label} {what} ({status})" if status != 200 else f"{label} failed mid-reply"
    if detail:
        text += f": {detail}"
    return redacted(text, secret)


class RecordRequest(Protocol):
    """Records one model request: what it cost, the seconds it took, whether it answered."""

    async def __call__(self, usage: Usage, seconds: float, *, ok: bool) -> None: ...


@asynccontextmanager
async def recorded(stream: ModelStream, record: RecordRequest | None) -> AsyncIterator[ModelStream]:
    """``stream``, to read in the block; once the block ends, however it ends (the reply
    failed, or the turn was stopped and the block cancelled), ``record`` gets what the
    provider counted, the seconds the request took and whether it answered whole."""
    asked = time.perf_counter()
    complete = False
    try:
        async with stream:
            yield stream
        complete = True
    finally:
        if record is not None:
            ok = complete and stream.reply.error is None
            await record(stream.spent, time.perf_counter() - asked, ok=ok)
