"""A webhook receiver on a loopback port: answers scripted statuses and checks signatures.

Each POST is recorded with its headers and raw body, then answered with the next status
of ``statuses`` (the last one repeats), once ``hold`` is set when there is one.
``signed_by`` checks a request's Standard Webhooks signature with the ``standardwebhooks``
package, as a receiver would: ``verify`` for a request sent at the real time, ``sign`` and
compare for one sent at a test clock's time (``verify`` refuses a timestamp five minutes
from the real now).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from standardwebhooks import Webhook

HOST = "127.0.0.1"
_TOLERANCE = 300


@dataclass(frozen=True)
class ReceivedWebhook:
    """One POST: its path and query, headers (names lowercased) and body as sent."""

    path_qs: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def signed_by(self, secret: str) -> bool:
        """Whether the Standard Webhooks headers sign this body with ``secret``."""
        hook = Webhook(secret)
        stamp = int(self.headers["webhook-timestamp"])
        if abs(stamp - time.time()) < _TOLERANCE:
            try:
                hook.verify(self.body, self.headers)
            except Exception:
                return False
            return True
        expected = hook.sign(
            self.headers["webhook-id"], datetime.fromtimestamp(stamp, UTC), self.body
        )
        return any(
            hmac.compare_digest(expected, given)
            for given in self.headers["webhook-signature"].split(" ")
        )


@dataclass
class WebhookReceiver:
    """The running receiver: its port, its script and what it received."""

    port: int = 0
    statuses: list[int] = field(default_factory=lambda: [204])
    received: list[ReceivedWebhook] = field(default_factory=list)
    # When set, each request is recorded and then answered only once this is set.
    hold: asyncio.Event | None = None

    def url(self, path: str = "/hook") -> str:
        return f"http://{HOST}:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.received.append(
            ReceivedWebhook(
                request.path_qs, {k.lower(): v for k, v in request.headers.items()}, body
            )
        )
        index = min(len(self.received), len(self.statuses)) - 1
        if self.hold is not None:
            await self.hold.wait()
        return web.Response(status=self.statuses[index], text="")


@asynccontextmanager
async def webhook_receiver(statuses: list[int] | None = None) -> AsyncIterator[WebhookReceiver]:
    """A receiver on a free port of 127.0.0.1, answering ``statuses`` in turn."""
    receiver = WebhookReceiver(statuses=list(statuses or [204]))
    app = web.Application()
    app.router.add_post("/{tail:.*}", receiver.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, HOST, 0)
    await site.start()
    server = site._server
    assert isinstance(server, asyncio.Server)
    receiver.port = server.sockets[0].getsockname()[1]
    try:
        yield receiver
    finally:
        await runner.cleanup()
