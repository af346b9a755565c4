"""The id of the request being served, carried from the HTTP request into its log lines.

The hub's middleware sets it for each HTTP request; the id then travels to a host in
the signaling message of that request (``LinkOffer.request_id``), and the host puts
it in the log lines of the connection the offer made.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from server.common.tokens import new_id

REQUEST_ID_HEADER = "X-Request-Id"

_current: ContextVar[str | None] = ContextVar("request_id", default=None)


def begin_request() -> str:
    """A new id for the request this task serves from now on."""
    request_id = new_id()
    _current.set(request_id)
    return request_id


def current_request_id() -> str | None:
    return _current.get()


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to records made while a request is served (unless given)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = _current.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True
