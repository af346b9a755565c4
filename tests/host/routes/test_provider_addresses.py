"""A team's model provider and SearXNG addresses under the host's address policy, on a host
that allows nothing beyond public addresses: one on loopback, a private network, the cloud
metadata address or behind a localhost name is refused when saved, naming the setting that
would allow it, and nothing is saved; a name that does not resolve yet is kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peer.connection import TeamApiCallError
from tests.host.routes.conftest import Team
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import RunningHub, hub_settings, running_hub

REFUSED = [
    "http://127.0.0.1:11434/v1",
    "http://localhost:11434/v1",
    "http://169.254.169.254/latest",
    "http://10.0.0.5:8000/v1",
    "http://[::1]:8000/v1",
    "http://2130706433/v1",  # 127.0.0.1 written as one number
]


@pytest.fixture
async def server(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """A hub whose host allows a team's services on public addresses only (the routes'
    ``team`` fixture is made on it)."""
    settings = hub_settings(tmp_path, database, **{"host.provider_allowed_hosts": []})
    async with running_hub(settings, database, clock=clock) as running:
        yield running


@pytest.mark.parametrize("address", REFUSED)
async def test_an_address_on_the_hosts_own_networks_is_refused_and_nothing_saved(
    team: Team, address: str
) -> None:
    before = await team.admin.call("providers-v1/list", {})
    for route, args in (
        ("providers-v1/create_custom", {"name": "Local", "baseUrl": address, "models": ["m"]}),
        ("providers-v1/update", {"provider": "anthropic", "baseUrl": address}),
        ("web-search-v1/set", {"engine": "searxng", "baseUrl": address}),
    ):
        with pytest.raises(TeamApiCallError) as caught:
            await team.admin.call(route, args)
        assert caught.value.code == "providerAddressRefused", route
        assert "provider_allowed_hosts" in caught.value.message
    assert await team.admin.call("providers-v1/list", {}) == before
    assert (await team.admin.call("web-search-v1/get", {}))["engine"] != "searxng"


async def test_a_public_address_or_a_name_not_resolved_yet_is_kept(team: Team) -> None:
    for address in ("http://93.184.216.34/v1", "http://llm.invalid/v1"):
        made = await team.admin.call(
            "providers-v1/create_custom",
            {"name": f"Gateway {address[7:9]}", "baseUrl": address, "models": ["m"]},
        )
        assert made["baseUrl"] == address
