"""Serving the built web client at ``/app`` (a single-page app: unknown paths get index.html).

The files are listed once at start; only those are ever served, so no request
path can reach outside the build folder.
"""

from __future__ import annotations

import asyncio
import mimetypes
from pathlib import Path

from aiohttp import web

# `npm run build` in web/ writes here, inside the package, so the build ships with it.
WEB_DIST = Path(__file__).resolve().parent / "web_dist"

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' blob: data:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
_NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>Crewhost</title>
<p>The web client has not been built. Run <code>make web</code> (or <code>make serve</code>).</p>
"""


def _list_files(dist: Path) -> dict[str, Path]:
    if not dist.is_dir():
        return {}
    return {p.relative_to(dist).as_posix(): p for p in dist.rglob("*") if p.is_file()}


def add_web_client(app: web.Application, dist: Path = WEB_DIST) -> None:
    files = _list_files(dist)

    async def serve(request: web.Request) -> web.StreamResponse:
        nonlocal files
        tail = request.match_info.get("tail", "")
        if tail.startswith("assets/") and tail not in files:
            # A build since the hub started names new assets: look again, once per miss.
            files = await asyncio.to_thread(_list_files, dist)
            if tail not in files:
                raise web.HTTPNotFound(text="no such file in the web client's build")
        index = files.get("index.html")
        if index is None:
            return web.Response(
                text=_NOT_BUILT, content_type="text/html", status=503, headers=_HEADERS
            )
        target = files.get(tail)
        if target is not None and tail != "index.html":
            headers = {
                **_HEADERS,
                "Content-Type": mimetypes.guess_type(target.name)[0] or "application/octet-stream",
            }
            # Built assets carry a content hash in their names, so they may be cached for good.
            if tail.startswith("assets/"):
                headers["Cache-Control"] = "public, max-age=31536000, immutable"
            return web.FileResponse(target, headers=headers)
        headers = {**_HEADERS, "Content-Type": "text/html", "Cache-Control": "no-cache"}
        return web.FileResponse(index, headers=headers)

    async def redirect(_request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/app/")

    app.router.add_get("/", redirect, name="root")
    app.router.add_get("/app", redirect, name="app_root")
    app.router.add_get("/app/{tail:.*}", serve, name="app")
