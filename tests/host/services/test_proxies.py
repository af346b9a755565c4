"""Browser proxies on both databases: a saved password this host cannot open is replaced
by a save that gives it again."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.errors import CrewhostError
from server.db.engine import Database
from server.host.browser.partitions import Partition, new_profile_id
from server.host.proxies.judge import ProxyAddressJudge
from server.host.proxies.marks import ProxyMarks
from server.host.services.proxies import ProxyService
from server.host.storage.profiles import BrowserProfile, BrowserProfileRepository
from tests.support.clock import FakeClock
from tests.support.resolvers import TableResolver

TEAM = "a" * 32


class RecordedPartitions:
    """The browser engine's side, with no browser: which partitions were closed."""

    def __init__(self) -> None:
        self.closed: list[Partition] = []

    async def close_partition(self, team_id: str, partition: Partition) -> None:
        self.closed.append(partition)


@pytest.fixture
def host(db: Database) -> Callable[[KeyRing, RecordedPartitions], ProxyService]:
    """A host's proxy service on ``db``, sealing with the given key ring."""

    def make(ring: KeyRing, partitions: RecordedPartitions) -> ProxyService:
        judge = ProxyAddressJudge(resolver=TableResolver({"px.example": ["93.184.216.34"]}))
        return ProxyService(
            db,
            FakeClock(),
            SecretBox(ring),
            partitions,
            ProxyMarks(),
            lambda _team, _event: None,
            judge=judge,
        )

    return make


async def test_a_password_this_host_cannot_open_is_replaced_by_a_save_that_gives_it(
    db: Database, host: Callable[[KeyRing, RecordedPartitions], ProxyService]
) -> None:
    profile = new_profile_id()
    async with db.write() as conn:
        await BrowserProfileRepository().add_profile(
            conn, BrowserProfile(profile, TEAM, "Shop", 4, 1.0)
        )
    before = host(KeyRing.generate(), RecordedPartitions())
    proxy = await before.create_proxy(TEAM, "me:old-pw@px.example:3128")
    await before.assign(TEAM, profile, proxy.id)

    # This host's key ring lacks the key that sealed the password.
    partitions = RecordedPartitions()
    after = host(KeyRing.generate(), partitions)
    with pytest.raises(CrewhostError) as caught:
        await after.plan_for(TEAM, profile)
    assert caught.value.code == "browserProxyPasswordUnusable"

    assert proxy.address is not None
    saved = await after.update_proxy(
        TEAM,
        proxy.id,
        previous_address=proxy.address,
        address_text="me:new-pw@px.example:3128",
        keep_password=False,
    )
    assert saved.password_set
    assert partitions.closed == [Partition.profile(profile)]
    plan = await after.plan_for(TEAM, profile)
    assert plan is not None
    assert plan.address is not None
    assert plan.address.password == "new-pw"
