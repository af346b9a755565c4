"""One middleware renders every error and counts every request."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from server.common.errors import (
    CrewhostError,
    Internal,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
)
from server.common.request_ids import REQUEST_ID_HEADER, begin_request
from server.hub.container import HUB_KEY
from server.hub.http.routing import BODY_UNREADABLE

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error_response(error: CrewhostError) -> web.Response:
    response = web.json_response({"error": error.to_wire()}, status=error.status)
    if isinstance(error, RateLimited):
        response.headers["Retry-After"] = str(max(1, round(error.retry_after)))
    return response


def _from_http_exception(exc: web.HTTPException) -> CrewhostError:
    if isinstance(exc, web.HTTPNotFound):
        return NotFound("no such route")
    if isinstance(exc, web.HTTPMethodNotAllowed):
        return MethodNotAllowed(f"{exc.method} is not allowed here")
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return PayloadTooLarge("the body is too large")
    error = CrewhostError(exc.reason)
    error.status = exc.status  # type: ignore[misc]
    error.code = "httpError"  # type: ignore[misc]
    return error


@web.middleware
async def errors_and_metrics(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    # Each request runs in a task of its own, so the id stays this request's.
    request_id = begin_request()
    try:
        response = await handler(request)
    except CrewhostError as exc:
        response = error_response(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = error_response(_from_http_exception(exc))
    except Exception:
        log.exception("unhandled error", extra={"path": request.path, "method": request.method})
        response = error_response(Internal("something went wrong on the server"))
    if request.get(BODY_UNREADABLE) and not response.prepared:
        response.force_close()
    if request.path.startswith("/v1/"):
        response.headers.setdefault("Cache-Control", "no-store")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if not response.prepared:
        response.headers[REQUEST_ID_HEADER] = request_id
    resource = request.match_info.route.resource
    route = resource.canonical if resource is not None else "unmatched"
    request.app[HUB_KEY].metrics.observe(
        route, request.method, response.status, time.perf_counter() - started
    )
    return response
