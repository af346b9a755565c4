"""The key ring at start, rotation and retirement, on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.common.crypto.ring import KeyRingBusy, KeyRingFile, KeyRingMissing
from server.common.errors import CrewhostError
from server.common.protocol.events import HostEvent
from server.db.engine import Database
from server.host.services.keys import SecretKeys
from server.host.services.providers import ProviderService
from server.host.storage.providers import ProviderRepository
from server.hub.container import Hub
from server.serve import builtin_host
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import hub_settings


def no_events(_team_id: str, _event: HostEvent) -> None:
    pass


async def usable(keys: SecretKeys, db: Database, clock: FakeClock, team_id: str) -> list[bool]:
    """Whether each provider of the team with a key set opens, through a newly opened box."""
    async with keys.open_box() as box:
        listed = await ProviderService(db, clock, box, no_events).list_providers(team_id)
    return [p.usable for p in listed if p.key_set]


async def test_the_first_start_makes_the_ring_and_a_lost_ring_refuses_the_next(
    db: Database, tmp_path: Path, clock: FakeClock
) -> None:
    ring_file = KeyRingFile(tmp_path / "host" / "key-ring.json")
    keys = SecretKeys(db, ring_file)
    async with keys.open_box() as box:
        assert ring_file.path.stat().st_mode & 0o777 == 0o600
        await ProviderService(db, clock, box, no_events).set_key("t" * 32, "openai", "sk-one")
    async with keys.open_box() as again:
        assert again.ring.active_id == box.ring.active_id

    ring_file.path.unlink()
    with pytest.raises(KeyRingMissing, match="restore the key ring") as caught:
        async with keys.open_box():
            pass
    assert caught.value.code == "keyRingMissing"
    assert "providers.api_key" in caught.value.message
    assert not ring_file.path.exists(), "no new ring in place of the lost one"


async def test_the_built_in_host_does_not_start_without_its_ring(
    database: ScratchDatabase, tmp_path: Path
) -> None:
    settings = hub_settings(tmp_path, database)
    hub = Hub.build(settings, db=database.open())
    try:
        await hub.db.migrate()
        async with builtin_host(settings, hub, "http://127.0.0.1:1") as host:
            await host.services.providers.set_key("t" * 32, "anthropic", "sk-ant-1")
        (tmp_path / "host" / "key-ring.json").unlink()
        with pytest.raises(KeyRingMissing):
            async with builtin_host(settings, hub, "http://127.0.0.1:1"):
                pass
    finally:
        await hub.db.close()


async def test_rotation_reseals_rows_of_both_keys_and_retire_waits_for_it(
    db: Database, tmp_path: Path, clock: FakeClock
) -> None:
    ring_file = KeyRingFile(tmp_path / "key-ring.json")
    keys = SecretKeys(db, ring_file, batch_size=2)  # several batches, one transaction each
    teams = ("a" * 32, "b" * 32)
    async with keys.open_box() as box:
        first = box.ring.active_id
        service = ProviderService(db, clock, box, no_events)
        for team in teams:
            await service.set_key(team, "anthropic", f"sk-ant-{team[0]}")
            await service.set_key(team, "openai", f"sk-oai-{team[0]}")
    # A rotation that stopped once it had saved its new key: rows of both keys from here on.
    ring_file.save(ring_file.load().with_new_key())
    async with keys.open_box() as box:
        second = box.ring.active_id
        service = ProviderService(db, clock, box, no_events)
        for team in teams:
            await service.set_key(team, "openrouter", f"sk-or-{team[0]}")
            await service.create_custom(
                team, "Gateway", "http://gw.test/v1", models=["m"], key="gw-key"
            )
    assert await keys.key_usage() == {first: 4, second: 4}
    for team in teams:
        assert await usable(keys, db, clock, team) == [True] * 4

    with pytest.raises(CrewhostError, match="4 encrypted secret") as caught:
        await keys.retire(first)
    assert caught.value.code == "keyInUse"
    with pytest.raises(CrewhostError, match="is the active key") as caught:
        await keys.retire(second)
    assert caught.value.code == "keyActive"

    report = await keys.rotate()
    assert (report.resealed, report.unreadable) == (8, 0)
    assert await keys.key_usage() == {report.key_id: 8}
    for team in teams:
        assert await usable(keys, db, clock, team) == [True] * 4
        async with keys.open_box() as box:
            credentials = await ProviderService(db, clock, box, no_events).credentials(
                team, "openai"
            )
        assert credentials.api_key == f"sk-oai-{team[0]}"

    await keys.retire(first)
    await keys.retire(second)
    assert ring_file.load().key_ids == (report.key_id,)
    with pytest.raises(CrewhostError) as caught:
        await keys.retire("deadbeef")
    assert caught.value.code == "keyNotFound"


async def test_a_ciphertext_rotation_cannot_open_keeps_its_key_until_cleared(
    db: Database, tmp_path: Path, clock: FakeClock
) -> None:
    ring_file = KeyRingFile(tmp_path / "key-ring.json")
    keys = SecretKeys(db, ring_file)
    team = "a" * 32
    async with keys.open_box() as box:
        old = box.ring.active_id
        service = ProviderService(db, clock, box, no_events)
        await service.set_key(team, "anthropic", "sk-ant-1")
        await service.set_key(team, "openai", "sk-oai-1")
    repo = ProviderRepository()
    async with db.write() as conn:
        moved = await repo.get_provider(conn, team, "anthropic")
        assert moved is not None
        await repo.update_provider(conn, team, "openai", api_key=moved.api_key)

    report = await keys.rotate()
    assert (report.resealed, report.unreadable) == (1, 1)
    with pytest.raises(CrewhostError) as caught:
        await keys.retire(old)
    assert caught.value.code == "keyInUse"
    async with keys.open_box() as box:
        await ProviderService(db, clock, box, no_events).clear_key(team, "openai")
    await keys.retire(old)


async def test_no_rotation_while_a_host_holds_the_ring(db: Database, tmp_path: Path) -> None:
    keys = SecretKeys(db, KeyRingFile(tmp_path / "key-ring.json"))
    async with keys.open_box() as box:
        with pytest.raises(KeyRingBusy, match="stop it first"):
            await keys.rotate()
        with pytest.raises(KeyRingBusy):
            await keys.retire(box.ring.active_id)
    assert (await keys.rotate()).key_id != box.ring.active_id
