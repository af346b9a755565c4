"""The one error hierarchy: every refusal carries an HTTP status and a stable code.

Services raise these; one middleware renders them for HTTP and one function for
the data channel, so a client can rely on ``code`` while ``message`` is for people.
"""

from __future__ import annotations

from typing import Any, ClassVar


class CrewhostError(Exception):
    """Base of every error a client may see."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal"

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        if code is not None:
            # A refinement of the class code (`lastOwner` is a `conflict`), kept per instance.
            self.code = code  # type: ignore[misc]

    def to_wire(self) -> dict[str, Any]:
        """The error as it goes on the wire: ``{code, message[, field]}``."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            body["field"] = self.field
        return body


class InvalidArgument(CrewhostError):
    status = 400
    code = "invalidArgument"


class Unauthenticated(CrewhostError):
    status = 401
    code = "unauthenticated"


class Forbidden(CrewhostError):
    status = 403
    code = "forbidden"


class NotFound(CrewhostError):
    status = 404
    code = "notFound"


class MethodNotAllowed(CrewhostError):
    status = 405
    code = "methodNotAllowed"


class Conflict(CrewhostError):
    status = 409
    code = "conflict"


class PayloadTooLarge(CrewhostError):
    status = 413
    code = "payloadTooLarge"


class UnsupportedMediaType(CrewhostError):
    status = 415
    code = "unsupportedMediaType"


class RateLimited(CrewhostError):
    status = 429
    code = "rateLimited"

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Internal(CrewhostError):
    status = 500
    code = "internal"


class Unavailable(CrewhostError):
    status = 503
    code = "unavailable"
