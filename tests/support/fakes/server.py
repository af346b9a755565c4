"""What every fake model provider shares: a loopback server, a script of replies, a record.

A fake is an async context manager serving one POST endpoint on a free port of
127.0.0.1. Each request is recorded, checked the way the real API checks it (a
refusal is answered with the provider's own error body and uses up no reply), and
then answered with the next scripted reply: an event stream cut into pieces at
chosen byte boundaries, or an HTTP error.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web

HOST = "127.0.0.1"
# How long a stalled stream holds its connection open at most.
STALL_LIMIT_SECONDS = 30.0
# OpenRouter's keep-alive, a comment line the event-stream format skips.
OPENROUTER_KEEP_ALIVE = b": OPENROUTER PROCESSING\n\n"


@dataclass(frozen=True)
class RecordedRequest:
    """One request a fake received: path, headers (names lowercased), and JSON body."""

    path: str
    headers: dict[str, str]
    body: Any  # None when the body was not JSON

    def messages(self) -> list[dict[str, Any]]:
        return list(self.body["messages"])


@dataclass(frozen=True)
class StreamReply:
    """A 200 event stream.

    ``body`` is the stream's bytes, or a function of the request that makes them.
    It is written in pieces of ``chunk_size`` bytes (random sizes from 1 to
    ``chunk_size`` with ``seed``), so a piece may end anywhere: inside a character,
    between CR and LF. ``stall_after`` pieces, the fake stops sending and holds the
    connection; ``drop_after`` pieces, it closes the connection mid-body.
    ``keep_alive_after`` pieces, it sends ``keep_alive`` (a comment, or Anthropic's
    ``ping`` event) ``keep_alives`` times, one per ``latency``, before the rest: a
    provider that keeps the connection busy without replying.
    """

    body: bytes | Callable[[RecordedRequest], bytes]
    chunk_size: int | None = None
    seed: int | None = None
    stall_after: int | None = None
    drop_after: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    keep_alive_after: int | None = None
    keep_alives: int = 0
    keep_alive: bytes = OPENROUTER_KEEP_ALIVE

    def pieces(self, body: bytes) -> Iterator[bytes]:
        if not self.chunk_size:
            yield body
            return
        rng = random.Random(self.seed)
        start = 0
        while start < len(body):
            size = rng.randint(1, self.chunk_size) if self.seed is not None else self.chunk_size
            yield body[start : start + size]
            start += size


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with a JSON (or plain text) body.

    ``split_at`` sends the body chunked, in two writes: that many bytes, a pause of
    ``split_pause`` seconds, then the rest, as a proxy or a slow server may. ``reason``
    replaces the status line's reason phrase.
    """

    status: int
    body: Mapping[str, Any] | str
    headers: Mapping[str, str] = field(default_factory=dict)
    reason: str | None = None
    split_at: int | None = None
    split_pause: float = 0.05

    def content(self) -> tuple[bytes, str]:
        """The body's bytes and content type."""
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return json.dumps(dict(self.body)).encode(), "application/json"


Reply = StreamReply | ErrorReply


def sse(event: str | None, data: Mapping[str, Any] | str, line_end: str = "\n") -> str:
    """One event in event-stream text."""
    text = data if isinstance(data, str) else json.dumps(data)
    lines = [f"event: {event}"] if event else []
    lines.append(f"data: {text}")
    return line_end.join(lines) + line_end + line_end


class FakeProviderServer:
    """A scripted fake of one provider endpoint; subclasses check requests like the real API.

    ``latency`` is the pause before each piece of a stream; 0 answers at once (a
    benchmark's setting). ``requests`` records every request, refused ones included.
    """

    path = "/"

    def __init__(self, *, latency: float = 0.001) -> None:
        self.latency = latency
        self.requests: list[RecordedRequest] = []
        self.origin = ""
        self._script: deque[Reply] = deque()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        """The base URL a client of this provider is configured with."""
        return self.origin

    def script(self, *replies: Reply) -> Self:
        """Queues replies, one per request to come."""
        self._script.extend(replies)
        return self

    @property
    def unplayed(self) -> int:
        return len(self._script)

    def drop_unplayed(self) -> None:
        """Forgets the replies not played yet (a failed test's would answer the next)."""
        self._script.clear()

    def refusal(self, request: RecordedRequest) -> web.Response | None:
        """The real API's answer to a request it refuses, or None to play the script."""
        return None

    @property
    def models_path(self) -> str:
        """Where the API lists its models (``GET``): beside Chat Completions."""
        return self.path.removesuffix("/chat/completions") + "/models"

    def key_refusal(self, request: RecordedRequest) -> web.Response | None:
        """The real API's answer to a request without the right key, or None."""
        return None

    def models(self) -> dict[str, Any]:
        """The model list, in the API's own shape."""
        return {}

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        app.router.add_get(self.models_path, self._list_models)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, HOST, 0)
        await site.start()
        self.origin = f"http://{HOST}:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _list_models(self, request: web.Request) -> web.StreamResponse:
        recorded = RecordedRequest(
            request.path, {name.lower(): value for name, value in request.headers.items()}, None
        )
        self.requests.append(recorded)
        refusal = self.key_refusal(recorded)
        return refusal if refusal is not None else web.json_response(self.models())

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        recorded = RecordedRequest(
            request.path, {name.lower(): value for name, value in request.headers.items()}, body
        )
        self.requests.append(recorded)
        refusal = self.refusal(recorded)
        if refusal is not None:
            return refusal
        if not self._script:
            return web.json_response({"error": "the fake has no scripted reply left"}, status=500)
        reply = self._script.popleft()
        if isinstance(reply, ErrorReply):
            if reply.split_at is not None:
                return await self._split_error(request, reply, reply.split_at)
            if isinstance(reply.body, str):
                return web.Response(
                    status=reply.status, reason=reply.reason, text=reply.body, headers=reply.headers
                )
            return web.json_response(
                dict(reply.body), status=reply.status, reason=reply.reason, headers=reply.headers
            )
        return await self._stream(request, recorded, reply)

    async def _split_error(
        self, request: web.Request, reply: ErrorReply, split_at: int
    ) -> web.StreamResponse:
        body, content_type = reply.content()
        response = web.StreamResponse(
            status=reply.status,
            reason=reply.reason,
            headers={"Content-Type": content_type, **reply.headers},
        )
        await response.prepare(request)
        await response.write(body[:split_at])
        await asyncio.sleep(reply.split_pause)
        await response.write(body[split_at:])
        await response.write_eof()
        return response

    async def _stream(
        self, request: web.Request, recorded: RecordedRequest, reply: StreamReply
    ) -> web.StreamResponse:
        body = reply.body(recorded) if callable(reply.body) else reply.body
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache",
                **reply.headers,
            }
        )
        await response.prepare(request)
        for number, piece in enumerate(reply.pieces(body)):
            if number == reply.keep_alive_after:
                for _ in range(reply.keep_alives):
                    if self.latency:
                        await asyncio.sleep(self.latency)
                    await response.write(reply.keep_alive)
            if number == reply.stall_after:
                async with asyncio.timeout(STALL_LIMIT_SECONDS):
                    await self._closing.wait()
                return response
            if number == reply.drop_after:
                assert request.transport is not None
                request.transport.close()
                return response
            if self.latency:
                await asyncio.sleep(self.latency)
            await response.write(piece)
        await response.write_eof()
        return response
