"""What went wrong talking to a model provider, in one error the turn loop can read.

A :class:`ProviderError` never escapes a stream's consumer: the stream ends with a
``Failed`` event carrying it. It is an exception only so the adapters can raise it
from deep inside the parsing and have one place turn it into that event. It is not
a :class:`server.common.errors.CrewhostError`: its ``status`` is the provider's HTTP
status, not one this server answers with, and the turn loop renders it as the
turn's ``error`` reason.
"""

from __future__ import annotations

import re
from typing import Literal

ProviderErrorKind = Literal[
    "no_key",  # no API key is configured for a provider that needs one
    "authentication",  # the provider refused the key (401)
    "permission",  # the key may not use this model or feature (403)
    "quota",  # out of credits or over a spend limit (402, or a 429 that waiting won't fix)
    "invalid_request",  # the provider refused the request (400, 413, 422)
    "not_found",  # no such model or endpoint (404)
    "rate_limited",  # 429: try again later
    "overloaded",  # 529, 503 or an in-stream overloaded_error: try again later
    "server_error",  # another 5xx or an in-stream api_error
    "network",  # could not connect, or the connection broke
    "timeout",  # no connection, or no data, within the configured time
    "malformed_stream",  # the answer is not the wire format it should be
]

# The stable error code a turn ends with for a failure a person can act on (set the key).
TURN_ERROR_CODES: dict[str, str] = {
    "no_key": "providerKeyMissing",
    "authentication": "providerKeyRefused",
}

# Kinds worth trying again as they are; whether the adapter does so itself is the
# retry policy's business (see RetryPolicy.retry_kinds).
RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limited", "overloaded", "server_error", "network", "timeout"}
)


class ProviderError(Exception):
    """One failure of a model request, written for the person who reads the turn's reason.

    ``status`` is the provider's HTTP status when there was one. ``retry_after`` is
    the provider's own advice in seconds, when it gave one. ``started`` is true when
    the stream had already delivered events to its consumer before failing: a retry
    is then the turn loop's decision, because the consumer has shown part of a reply.
    """

    def __init__(
        self,
        kind: ProviderErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        started: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind: ProviderErrorKind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.started = started

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed later."""
        return self.kind in RETRYABLE_KINDS

    def after_delivery(self) -> ProviderError:
        """This error, marked as having happened after events were delivered."""
        return ProviderError(
            self.kind,
            self.message,
            status=self.status,
            retry_after=self.retry_after,
            started=True,
        )

    def __repr__(self) -> str:
        return (
            f"ProviderError(kind={self.kind!r}, message={self.message!r}, status={self.status!r},"
            f" retryable={self.retryable!r}, started={self.started!r})"
        )


def kind_for_status(status: int) -> ProviderErrorKind:
    """The kind of an HTTP error status, before the body refines it."""
    if status == 401:
        return "authentication"
    if status == 402:
        return "quota"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if status >= 500:
        return "server_error"
    return "invalid_request"


# Things that look like API keys, for the odd provider that echoes one back in an error.
_KEY_LIKE = re.compile(r"\b(?:sk|rk|pk|key)-[A-Za-z0-9_\-*.]{6,}")
_MAX_MESSAGE_CHARS = 500


def redacted(text: str, secret: str | None, *, limit: int = _MAX_MESSAGE_CHARS) -> str:
    """``text`` without ``secret`` or anything shaped like a key, and at most ``limit``
    characters (500 unless told)."""
    if secret:
        text = text.replace(secret, "[redacted]")
    text = _KEY_LIKE.sub("[redacted]", text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
