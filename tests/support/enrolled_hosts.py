"""A second host of a team beside the hub's built-in one: enrolled with its own key, built
over the hub's database, and linked to the hub as ``crewhost host`` would be."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.keys import SigningKey
from server.host.start import RunningHost, build_host, run_link
from tests.support.hub_server import ApiClient, RunningHub


async def enrol_host(
    server: RunningHub, owner: ApiClient, team_id: str, key: SigningKey, *, name: str = "Lab"
) -> str:
    """Enrols a host with ``key`` in ``team_id`` the way its first start does: the owner makes
    an enrolment code and the host presents it. Answers the new host's id."""
    enrolment = await owner.post(f"/v1/teams/{team_id}/hosts/enrolments", {"name": name})
    enrolled = await server.client().post(
        "/v1/hosts/enrol", {"code": enrolment.body["code"], "publicKey": key.public_key}
    )
    assert enrolled.status == 201, enrolled.body
    return str(enrolled.body["hostId"])


@asynccontextmanager
async def linked_host(
    server: RunningHub, owner: ApiClient, team_id: str, data_dir: Path
) -> AsyncIterator[RunningHost]:
    """A host of ``team_id`` enrolled and linked to ``server`` until the block ends."""
    key = SigningKey.generate()
    host_id = await enrol_host(server, owner, team_id, key)
    services = build_host(
        server.hub.settings.model_copy(update={"data_dir": data_dir}),
        key,
        server.hub.db,
        secrets=SecretBox(KeyRing.generate()),
    )
    services.host_id = host_id
    async with run_link(services, server.url) as running:
        await asyncio.wait_for(running.link.linked.wait(), 10)
        yield running
