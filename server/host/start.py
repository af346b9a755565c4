"""Starting a host: the composition root of `crewhost host` (enrolment, link, services)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass

from server.common.clock import Clock
from server.common.crypto.box import SecretBox
from server.common.keys import SigningKey
from server.config import Settings
from server.db.engine import Database
from server.host.container import HostServices
from server.host.enrolment import Enrolment
from server.host.link import REMOVALS_WAIT_SECONDS, HostLinkClient
from server.host.metrics_endpoint import metrics_endpoint
from server.host.routes.tables import ROUTE_TABLES
from server.host.services.keys import SecretKeys, key_ring_file

log = logging.getLogger(__name__)


@dataclass
class RunningHost:
    services: HostServices
    link: HostLinkClient


@asynccontextmanager
async def run_link(
    services: HostServices, hub_url: str, hub_key: str | None = None
) -> AsyncIterator[RunningHost]:
    """Serve ``services`` linked to the hub at ``hub_url``; leaving closes the link, then them.
    What runs as a member at start (routines due, queued messages) waits for the first link
    to say who left the host's teams while it was down, ``REMOVALS_WAIT_SECONDS`` at most."""
    services.removals.expect(REMOVALS_WAIT_SECONDS)
    async with services:
        link = HostLinkClient(services, hub_url, hub_key=hub_key)
        task = asyncio.get_running_loop().create_task(link.run())
        try:
            yield RunningHost(services, link)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def build_host(
    settings: Settings,
    identity: SigningKey,
    db: Database,
    *,
    secrets: SecretBox,
    clock: Clock | None = None,
) -> HostServices:
    """The services of a host that serves every Team API route table."""
    return HostServices.build(settings, identity, db, ROUTE_TABLES, secrets=secrets, clock=clock)


def open_secret_box(settings: Settings, db: Database) -> AbstractAsyncContextManager[SecretBox]:
    """The host's secret box, its key ring held while the block runs; a missing ring while
    the database holds ciphertexts refuses the start (``keyRingMissing``)."""
    return SecretKeys(db, key_ring_file(settings)).open_box()


async def run_remote_host(settings: Settings, hub_url: str, enrolment: Enrolment) -> None:
    """``crewhost host``, once enrolled: keep the link until a signal stops it."""
    key, state, state_file = enrolment.key, enrolment.state, enrolment.state_file
    # A remote host keeps its own rows (profiles, agents) in its own database.
    db = Database.from_settings(settings)
    await db.migrate()
    async with open_secret_box(settings, db) as secrets:
        services = build_host(settings, key, db, secrets=secrets)
        services.host_id = state["host_id"]
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with contextlib.AsyncExitStack() as stack:
            running = await stack.enter_async_context(
                run_link(services, hub_url, state.get("hub_key"))
            )
            if settings.host.metrics_listen:
                url = await stack.enter_async_context(
                    metrics_endpoint(services.metrics, settings.host.metrics_listen)
                )
                log.info("serving metrics", extra={"url": url})
            first_link = asyncio.ensure_future(running.link.linked.wait())
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({first_link, stopped}, return_when=asyncio.FIRST_COMPLETED)
            first_link.cancel()
            if running.link.hub_key and "hub_key" not in state:
                # From now on a hub with another ticket key is refused.
                state["hub_key"] = running.link.hub_key
                state_file.save(state)
            gc.freeze()  # start-up's objects live as long as the process (see server/serve.py)
            await stopped
    await db.close()
