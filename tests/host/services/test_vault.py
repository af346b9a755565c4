"""Vault secrets in the secret box: bound to team, item and field; tamper, moves and rotation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing, KeyRingFile
from server.common.errors import CrewhostError
from server.db.engine import Database
from server.db.tables import VAULT_TOTP_SECRET, vault_items
from server.host.services.keys import SecretKeys
from server.host.services.vault import VaultService
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase

TEAM_A, TEAM_B = "a" * 32, "b" * 32
LOGIN = {"name": "Shop", "sites": ["https://shop.example"], "password": "pw-a"}
CARD = {"name": "Card", "number": "4111111111111111", "security_code": "123"}


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()


async def column(db: Database, item_id: str, name: str) -> bytes:
    async with db.read() as conn:
        value: bytes = (
            await conn.execute(sa.select(vault_items.c[name]).where(vault_items.c.id == item_id))
        ).scalar_one()
    return bytes(value)


async def set_column(db: Database, item_id: str, name: str, value: bytes) -> None:
    async with db.write() as conn:
        await conn.execute(
            vault_items.update().where(vault_items.c.id == item_id).values({name: value})
        )


async def unusable(vault: VaultService, team: str, item_id: str, field: str) -> str:
    with pytest.raises(CrewhostError) as caught:
        await vault.open_secret(team, item_id, field)  # type: ignore[arg-type]
    return caught.value.code


async def test_a_tampered_or_moved_ciphertext_does_not_open(
    db: Database, tmp_path: Path, clock: FakeClock
) -> None:
    keys = SecretKeys(db, KeyRingFile(tmp_path / "key-ring.json"))
    async with keys.open_box() as box:
        vault = VaultService(db, clock, box)
        a = await vault.create_item(TEAM_A, "login", LOGIN)
        other = await vault.create_item(TEAM_A, "login", {**LOGIN, "password": "pw-other"})
        paid = await vault.create_item(TEAM_A, "card", CARD)
        assert await vault.open_secret(TEAM_A, a.id, "password") == "pw-a"

        sealed = await column(db, a.id, "password")
        await set_column(db, a.id, "password", sealed[:-1] + bytes([sealed[-1] ^ 1]))
        assert await unusable(vault, TEAM_A, a.id, "password") == "vaultSecretUnusable"

        # Another item's password, copied into this row, does not open here.
        await set_column(db, a.id, "password", await column(db, other.id, "password"))
        assert await unusable(vault, TEAM_A, a.id, "password") == "vaultSecretUnusable"
        # Nor does a card's security code moved into its number.
        await set_column(db, paid.id, "card_number", await column(db, paid.id, "security_code"))
        assert await unusable(vault, TEAM_A, paid.id, "number") == "vaultSecretUnusable"
        # Nor does a row moved to another team.
        async with db.write() as conn:
            await conn.execute(
                vault_items.update().where(vault_items.c.id == other.id).values(team_id=TEAM_B)
            )
        assert await unusable(vault, TEAM_B, other.id, "password") == "vaultSecretUnusable"
        # Setting it again makes it usable.
        await vault.update_item(TEAM_A, a.id, {"password": "pw-new"})
        assert await vault.open_secret(TEAM_A, a.id, "password") == "pw-new"


@pytest.mark.parametrize(
    ("kind", "fields", "code"),
    [
        ("card", {**CARD, "number": "\u00b2" * 16}, "vaultCardNumberInvalid"),
        ("card", {**CARD, "number": "\uff14\uff11" + "\uff11" * 14}, "vaultCardNumberInvalid"),
        ("card", {**CARD, "number": "\u0664" + "\u0661" * 15}, "vaultCardNumberInvalid"),
        ("card", {**CARD, "security_code": "\uff11\uff12\uff13"}, "invalidArgument"),
        ("card", {**CARD, "security_code": "\u00b9\u00b2\u00b3"}, "invalidArgument"),
        ("login", {**LOGIN, "totp_secret": "A"}, "invalidArgument"),
        ("login", {**LOGIN, "totp_secret": "JBSWY3"}, "invalidArgument"),
    ],
)
async def test_digits_of_other_scripts_and_impossible_totp_secrets_are_refused(
    db: Database, clock: FakeClock, kind: str, fields: dict[str, str], code: str
) -> None:
    vault = VaultService(db, clock, SecretBox(KeyRing.generate()))
    with pytest.raises(CrewhostError) as caught:
        await vault.create_item(TEAM_A, kind, fields)
    assert caught.value.code == code
    assert (await vault.list_items(TEAM_A)).total == 0


async def test_a_stored_totp_secret_that_is_not_base32_is_unusable(
    db: Database, clock: FakeClock
) -> None:
    box = SecretBox(KeyRing.generate())
    vault = VaultService(db, clock, box)
    made = await vault.create_item(TEAM_A, "login", {**LOGIN, "totp_secret": "JBSWY3DP"})
    assert len(await vault.one_time_code(TEAM_A, made.id) or "") == 6
    # As an item saved before secrets were checked this closely holds it.
    binding = VAULT_TOTP_SECRET.binding(TEAM_A, made.id)
    await set_column(db, made.id, VAULT_TOTP_SECRET.column, box.encrypt(b"A", binding))
    with pytest.raises(CrewhostError) as caught:
        await vault.one_time_code(TEAM_A, made.id)
    assert caught.value.code == "vaultSecretUnusable"


async def test_rotation_reseals_vault_rows(db: Database, tmp_path: Path, clock: FakeClock) -> None:
    ring_file = KeyRingFile(tmp_path / "key-ring.json")
    keys = SecretKeys(db, ring_file, batch_size=2)
    async with keys.open_box() as box:
        first = box.ring.active_id
        vault = VaultService(db, clock, box)
        made = [
            await vault.create_item(team, "login", {**LOGIN, "totp_secret": "JBSWY3DP"})
            for team in (TEAM_A, TEAM_B)
        ]
        cards = [await vault.create_item(team, "card", CARD) for team in (TEAM_A, TEAM_B)]
    assert await keys.key_usage() == {first: 8}
    with pytest.raises(CrewhostError) as caught:
        await keys.retire(first)
    assert caught.value.code == "keyActive"

    report = await keys.rotate()
    assert (report.resealed, report.unreadable) == (8, 0)
    assert await keys.key_usage() == {report.key_id: 8}
    await keys.retire(first)
    async with keys.open_box() as box:
        vault = VaultService(db, clock, box)
        for team, item, paid in zip((TEAM_A, TEAM_B), made, cards, strict=True):
            assert await vault.open_secret(team, item.id, "password") == "pw-a"
            assert await vault.open_secret(team, item.id, "totp_secret") == "JBSWY3DP"
            assert await vault.open_secret(team, paid.id, "number") == CARD["number"]
            assert await vault.open_secret(team, paid.id, "security_code") == "123"


async def test_a_lost_ring_with_vault_rows_refuses_the_start(
    db: Database, tmp_path: Path, clock: FakeClock
) -> None:
    ring_file = KeyRingFile(tmp_path / "key-ring.json")
    keys = SecretKeys(db, ring_file)
    async with keys.open_box() as box:
        await VaultService(db, clock, box).create_item(TEAM_A, "card", CARD)
    ring_file.path.unlink()
    with pytest.raises(CrewhostError, match=r"vault_items\.card_number"):
        async with keys.open_box():
            pass


async def test_a_page_of_the_list_marks_set_secrets_and_counts_the_team_alone(
    db: Database, clock: FakeClock
) -> None:
    vault = VaultService(db, clock, SecretBox(KeyRing.generate()))
    await vault.create_item(TEAM_A, "login", {**LOGIN, "name": "A shop"})
    await vault.create_item(TEAM_A, "card", {**CARD, "name": "B card"})
    await vault.create_item(TEAM_A, "contact", {"name": "C contact", "email": "c@example.com"})
    await vault.create_item(TEAM_B, "login", LOGIN)
    first = await vault.list_items(TEAM_A, limit=2)
    assert first.total == 3
    assert [(i.name, i.secrets_set) for i in first.items] == [
        ("A shop", ("password",)),
        ("B card", ("number", "security_code")),
    ]
    assert first.items[1].card_last4 == "1111"
    rest = await vault.list_items(TEAM_A, offset=2, limit=2)
    assert ([i.name for i in rest.items], rest.total) == (["C contact"], 3)
    past = await vault.list_items(TEAM_A, offset=5, limit=2)
    assert (past.items, past.total) == ([], 3)
    assert (await vault.list_summaries(TEAM_B)).total == 1
    assert (await vault.list_items("c" * 32)).total == 0
