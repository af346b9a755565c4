"""Running a hub (and, for ``crewhost serve``, its built-in host) until a signal stops it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from server.common.clock import Clock
from server.common.errors import Unavailable
from server.common.keys import SigningKey
from server.config import Settings
from server.host.enrolment import identity_path
from server.host.start import RunningHost, build_host, open_secret_box, run_link
from server.hub.app import build_app
from server.hub.container import Hub

log = logging.getLogger(__name__)


def loopback_url(settings: Settings, port: int) -> str:
    """Where the built-in host reaches its hub: the bound address, or loopback for a wildcard."""
    host = settings.hub.bind
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - naming the wildcard, not binding to it
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def public_base(settings: Settings, port: int) -> str:
    if settings.hub.public_url:
        return settings.hub.public_url.rstrip("/")
    return loopback_url(settings, port)


@asynccontextmanager
async def builtin_host(
    settings: Settings, hub: Hub, hub_url: str, *, clock: Clock | None = None
) -> AsyncIterator[RunningHost]:
    """The host of ``crewhost serve``: registered directly, linked over loopback like any other."""
    key = SigningKey.load_or_create(identity_path(settings))
    async with open_secret_box(settings, hub.db) as secrets:
        services = build_host(settings, key, hub.db, secrets=secrets, clock=clock)
        services.host_id = (await hub.hosts.register_builtin(key.public_key, settings.host.name)).id
        # One process, one /metrics: the hub's families and the built-in host's.
        hub.metrics.include(services.metrics.registry)
        async with run_link(services, hub_url) as running:
            yield running


async def run(settings: Settings, *, with_builtin_host: bool) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly."""
    hub = Hub.build(settings)
    app = build_app(hub)
    runner = web.AppRunner(app, access_log=log if settings.hub.access_log else None)
    await runner.setup()
    site = web.TCPSite(runner, settings.hub.bind, settings.hub.port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        where = f"{settings.hub.bind}:{settings.hub.port}"
        raise Unavailable(f"cannot listen on {where}: {exc.strerror or exc}") from exc
    port = runner.addresses[0][1] if runner.addresses else settings.hub.port
    base = public_base(settings, port)
    loop_kind = type(asyncio.get_running_loop()).__module__.split(".")[0]
    log.info("hub listening", extra={"url": base, "event_loop": loop_kind})
    start = await hub.setup.issue_start_code()
    if start.code is not None:
        # The code sits after '#', so it never reaches a server log when the link is opened.
        print(
            "\nCrewhost is ready. Create the first owner at:\n\n"
            f"    {base}/app/setup#code={start.code}\n",
            flush=True,
        )
    elif start.issued_elsewhere:
        print(
            "\nCrewhost is ready. No owner exists yet, and a setup link was printed already "
            "(by another hub on this database, or an earlier start).\n"
            f"For a new one, run `crewhost admin setup-code` and open "
            f"{base}/app/setup#code=<the code it prints>\n",
            flush=True,
        )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if with_builtin_host:
                await stack.enter_async_context(
                    builtin_host(settings, hub, loopback_url(settings, port))
                )
            # What start-up made lives as long as the process: keep it out of every later
            # collection, so a full collection walks only what serving creates.
            gc.freeze()
            await stop.wait()
    finally:
        log.info("shutting down")
        await runner.cleanup()
