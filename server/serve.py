"""Running a hub (and, for ``crewhost serve``, its built-in host) until a signal stops it."""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web

from server.config import Settings
from server.hub.container import Hub
from server.hub.http.app import build_app
from server.hub.services.hosts import HostEntry

log = logging.getLogger(__name__)

BUILTIN_HOST_ID = "builtin"


def builtin_host_entry(settings: Settings) -> HostEntry:
    return HostEntry(id=BUILTIN_HOST_ID, name=settings.host.name, builtin=True, online=True)


def public_base(settings: Settings, port: int) -> str:
    if settings.hub.public_url:
        return settings.hub.public_url.rstrip("/")
    host = settings.hub.bind
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - naming the wildcard, not binding to it
        host = "127.0.0.1"
    return f"http://{host}:{port}"


async def run(settings: Settings, *, with_builtin_host: bool) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly."""
    hub = Hub.build(
        settings, builtin_host=builtin_host_entry(settings) if with_builtin_host else None
    )
    app = build_app(hub)
    runner = web.AppRunner(app, access_log=log if settings.hub.access_log else None)
    await runner.setup()
    site = web.TCPSite(runner, settings.hub.bind, settings.hub.port)
    await site.start()
    port = runner.addresses[0][1] if runner.addresses else settings.hub.port
    base = public_base(settings, port)
    log.info("hub listening", extra={"url": base})
    code = await hub.setup.issue_code()
    if code is not None:
        # The code sits after '#', so it never reaches a server log when the link is opened.
        print(
            "\nCrewhost is ready. Create the first owner at:\n\n"
            f"    {base}/app/setup#code={code}\n",
            flush=True,
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        log.info("shutting down")
        await runner.cleanup()
