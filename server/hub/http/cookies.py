"""The session cookie, and the scheme and origin a request was made to."""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from server.config import HubSettings

# Under TLS the cookie takes the __Host- prefix: Secure, Path=/, no Domain, so no
# sibling subdomain can set or shadow it.
SECURE_COOKIE = "__Host-crewhost_session"
PLAIN_COOKIE = "crewhost_session"


def request_is_secure(request: web.Request, settings: HubSettings) -> bool:
    if settings.trust_forwarded:
        proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
        if proto:
            return proto == "https"
    return request.secure


def request_origin(request: web.Request, settings: HubSettings) -> str:
    """The origin this request was made to: the configured public URL, or scheme and Host."""
    if settings.public_url:
        parts = urlsplit(settings.public_url)
        return f"{parts.scheme}://{parts.netloc}"
    scheme = "https" if request_is_secure(request, settings) else "http"
    host = request.host
    if settings.trust_forwarded:
        host = request.headers.get("X-Forwarded-Host", host).split(",")[0].strip()
    return f"{scheme}://{host}"


def read_session_token(request: web.Request, secure: bool) -> str | None:
    if secure:
        return request.cookies.get(SECURE_COOKIE)
    return request.cookies.get(PLAIN_COOKIE)


def set_session_cookie(
    response: web.StreamResponse,
    request: web.Request,
    settings: HubSettings,
    token: str,
    max_age: int,
) -> None:
    secure = request_is_secure(request, settings)
    response.set_cookie(
        SECURE_COOKIE if secure else PLAIN_COOKIE,
        token,
        max_age=max_age,
        path="/",
        secure=secure,
        httponly=True,
        samesite="Lax",
    )


def clear_session_cookie(
    response: web.StreamResponse, request: web.Request, settings: HubSettings
) -> None:
    secure = request_is_secure(request, settings)
    response.del_cookie(
        SECURE_COOKIE if secure else PLAIN_COOKIE,
        path="/",
        secure=secure,
        httponly=True,
        samesite="Lax",
    )
