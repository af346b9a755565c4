"""``POST /v1/hooks/{hook_id}``: a webhook delivery from another system.

Not a route of the table: its sender is no browser and holds no session, so there is
no CSRF check and no sign-in; the Standard Webhooks signature is its authentication.
The body is read up to the limit and no further.
"""

from __future__ import annotations

from aiohttp import web

from server.common.errors import PayloadTooLarge
from server.common.protocol.hooks import MAX_HOOK_BODY
from server.hub.container import HUB_KEY
from server.hub.http.routing import BODY_UNREADABLE

_SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


async def read_limited(request: web.Request, limit: int) -> bytes:
    """The body, or ``PayloadTooLarge`` as soon as it passes ``limit`` (the rest unread)."""
    if request.content_length is not None and request.content_length > limit:
        request[BODY_UNREADABLE] = True
        raise PayloadTooLarge(f"the body may be at most {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while chunk := await request.content.readany():
        size += len(chunk)
        if size > limit:
            request[BODY_UNREADABLE] = True
            raise PayloadTooLarge(f"the body may be at most {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def receive_delivery(request: web.Request) -> web.Response:
    """Check a delivery's signature, keep it for the hook's host, answer 202 with its id."""
    hub = request.app[HUB_KEY]
    body = await read_limited(request, MAX_HOOK_BODY)
    headers = {name: request.headers.get(name, "") for name in _SIGNATURE_HEADERS}
    accepted = await hub.hooks.receive(request.match_info["hook_id"], headers, body)
    status = "skipped" if accepted.skipped else "accepted"
    return web.json_response({"id": accepted.delivery.id, "status": status}, status=202)
