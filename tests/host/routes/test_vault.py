"""vault-v1 over real peers: roles, bad input, secrets that never leave, tenant isolation."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from peer.connection import TeamApiCallError
from server.db.tables import vault_items
from server.host.services.vault import MASK, MAX_ITEMS
from tests.host.routes.conftest import Roles, database_bytes, refused
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member

PASSWORD = "hunter2-NEVER-SHOWN-passw0rd"
CARD = "4111 1111 1111 1111"
CODE = "737"
TOTP = "JBSWY3DPEHPK3PXP"


def login(**extra: Any) -> dict[str, Any]:
    return {
        "item": {
            "kind": "login",
            "name": "Shop",
            "sites": ["https://shop.example/sign-in"],
            "username": "ada@example.com",
            "password": PASSWORD,
            **extra,
        }
    }


def card() -> dict[str, Any]:
    return {
        "item": {
            "kind": "card",
            "name": "Team card",
            "cardholder": "Ada Lovelace",
            "number": CARD,
            "expiry": "12/29",
            "securityCode": CODE,
            "billingAddress": "1 Analytical Way\nLondon",
        }
    }


async def test_admins_keep_items_and_members_see_names_and_kinds(roles: Roles) -> None:
    made = await roles.admin.call("vault-v1/create", login(totpSecret="jbsw y3dp ehpk 3pxp"))
    assert made["sites"] == ["https://shop.example"]
    assert (made["passwordSet"], made["totpSecretSet"], made["numberSet"]) == (True, True, False)
    paid = await roles.owner.call("vault-v1/create", card())
    assert (paid["cardLast4"], paid["cardBrand"], paid["numberSet"]) == ("1111", "visa", True)
    assert paid["securityCodeSet"]
    await roles.owner.call(
        "vault-v1/create",
        {"item": {"kind": "contact", "name": "Office", "email": "office@example.com"}},
    )
    names = (await roles.member.call("vault-v1/list_names"))["items"]
    assert [(i["name"], i["kind"]) for i in names] == [
        ("Office", "contact"),
        ("Shop", "login"),
        ("Team card", "card"),
    ]
    assert set(names[0]) == {"id", "kind", "name", "sites"}

    ref = {"itemId": made["id"]}
    for route, args in (
        ("vault-v1/list", {}),
        ("vault-v1/read", ref),
        ("vault-v1/create", login()),
        ("vault-v1/update", {**ref, "name": "Mine"}),
        ("vault-v1/delete", ref),
    ):
        assert await refused(roles.member, route, args) == "forbidden", route

    # The mask keeps a secret; null clears one; other fields change as given.
    changed = await roles.admin.call(
        "vault-v1/update",
        {**ref, "password": MASK, "totpSecret": None, "username": "grace@example.com"},
    )
    assert (changed["passwordSet"], changed["totpSecretSet"]) == (True, False)
    assert changed["username"] == "grace@example.com"
    services_vault = await roles.admin.call("vault-v1/read", ref)
    assert services_vault == changed
    assert (await roles.admin.call("vault-v1/delete", ref)) == {"deleted": True}
    # create three, update one, delete one: the member hears each change, nothing in it.
    heard = [await asyncio.wait_for(roles.member.events.get(), 5) for _ in range(5)]
    assert heard == [{"event": "vault-changed", "data": {}}] * 5
    assert await refused(roles.admin, "vault-v1/read", ref) == "vaultItemNotFound"
    assert len((await roles.admin.call("vault-v1/list"))["items"]) == 2


async def test_the_mask_keeps_the_stored_value(server: RunningHub, roles: Roles) -> None:
    made = await roles.admin.call("vault-v1/create", login())
    await roles.admin.call("vault-v1/update", {"itemId": made["id"], "password": MASK})
    vault = server.builtin.services.vault
    assert await vault.open_secret(roles.team_id, made["id"], "password") == PASSWORD
    await roles.admin.call("vault-v1/update", {"itemId": made["id"], "password": "new-one"})
    assert await vault.open_secret(roles.team_id, made["id"], "password") == "new-one"
    # A site added would be given the kept password: it is entered again with the site.
    sites = ["https://shop.example/", "https://collect.example/"]
    added = {"itemId": made["id"], "sites": sites, "password": MASK}
    assert await refused(roles.admin, "vault-v1/update", added) == "secretNeedsReentry"
    read = await roles.admin.call("vault-v1/read", {"itemId": made["id"]})
    assert read["sites"] == ["https://shop.example"]
    # The same site keeps it, and so does a site given with the password.
    await roles.admin.call("vault-v1/update", {"itemId": made["id"], "sites": sites[:1]})
    await roles.admin.call("vault-v1/update", {**added, "password": "for-both"})
    assert await vault.open_secret(roles.team_id, made["id"], "password") == "for-both"


async def test_bad_input_gets_a_code_and_changes_nothing(roles: Roles) -> None:
    made = await roles.admin.call("vault-v1/create", login())
    paid = await roles.admin.call("vault-v1/create", card())
    item = login()["item"]
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("vault-v1/create", {"item": {**item, "kind": "note"}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "name": ""}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "name": "n" * 101}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "name": "a\tb"}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "sites": []}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "sites": ["ftp://x"]}}, "vaultSiteInvalid"),
        ("vault-v1/create", {"item": {**item, "sites": ["shop"]}}, "vaultSiteInvalid"),
        ("vault-v1/create", {"item": {**item, "sites": ["https://a@b.c"]}}, "vaultSiteInvalid"),
        ("vault-v1/create", {"item": {**item, "sites": ["https://x"] * 21}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "password": "p" * 1025}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "password": ""}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "totpSecret": "not base32!"}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "totpSecret": "A"}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "notes": "n" * 2001}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**item, "number": CARD}}, "invalidArgument"),
        (
            "vault-v1/create",
            {"item": {**card()["item"], "number": "4111"}},
            "vaultCardNumberInvalid",
        ),
        (
            "vault-v1/create",
            {"item": {**card()["item"], "number": "4111 1111 1111 1112"}},
            "vaultCardNumberInvalid",
        ),
        (
            "vault-v1/create",
            {"item": {**card()["item"], "number": "\u00b2" * 16}},
            "vaultCardNumberInvalid",
        ),
        ("vault-v1/create", {"item": {**card()["item"], "securityCode": "12"}}, "invalidArgument"),
        ("vault-v1/create", {"item": {**card()["item"], "expiry": "13/29"}}, "invalidArgument"),
        (
            "vault-v1/create",
            {"item": {"kind": "contact", "name": "C", "email": "nope"}},
            "invalidArgument",
        ),
        ("vault-v1/create", {"item": {**item, "password": 5}}, "invalidArgument"),
        ("vault-v1/create", {"item": item, "extra": 1}, "invalidArgument"),
        ("vault-v1/update", {"itemId": made["id"], "number": CARD}, "vaultFieldNotAllowed"),
        ("vault-v1/update", {"itemId": paid["id"], "password": "x"}, "vaultFieldNotAllowed"),
        ("vault-v1/update", {"itemId": made["id"], "name": None}, "invalidArgument"),
        ("vault-v1/update", {"itemId": made["id"], "sites": []}, "invalidArgument"),
        ("vault-v1/update", {"itemId": "0" * 32, "name": "x"}, "vaultItemNotFound"),
        ("vault-v1/read", {"itemId": ""}, "invalidArgument"),
        ("vault-v1/delete", {"itemId": "0" * 32}, "vaultItemNotFound"),
    ]
    before = await roles.admin.call("vault-v1/list")
    for route, args, code in cases:
        assert await refused(roles.admin, route, args) == code, (route, args)
    assert await roles.admin.call("vault-v1/list") == before


async def test_a_team_holds_at_most_a_thousand_items(server: RunningHub, roles: Roles) -> None:
    vault = server.builtin.services.vault
    for n in range(MAX_ITEMS):
        await vault.create_item(roles.team_id, "contact", {"name": f"C{n}"})
    contact = {"item": {"kind": "contact", "name": "More"}}
    assert await refused(roles.admin, "vault-v1/create", contact) == "vaultFull"
    # Both lists come a page at a time, each answer well within one Team API message.
    for connection, route in (
        (roles.admin, "vault-v1/list"),
        (roles.member, "vault-v1/list_names"),
    ):
        names: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = await connection.call(route, {"offset": offset})
            assert page["total"] == MAX_ITEMS
            assert len(page["items"]) <= 200
            names += [item["name"] for item in page["items"]]
            offset = page["nextOffset"]
        assert names == sorted(f"C{n}" for n in range(MAX_ITEMS))
    small = await roles.admin.call("vault-v1/list", {"offset": 995, "limit": 10})
    assert (len(small["items"]), small["nextOffset"]) == (5, None)
    for bad in ({"limit": 201}, {"limit": 0}, {"offset": -1}, {"offset": 2**63}):
        assert await refused(roles.admin, "vault-v1/list", bad) == "invalidArgument"
    # Past what SQLite holds: refused by the model, never an overflow in the query.
    assert await refused(roles.member, "vault-v1/list_names", {"offset": 2**63}) == (
        "invalidArgument"
    )


async def test_secrets_never_leave_the_host(
    server: RunningHub, roles: Roles, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    made = await roles.admin.call("vault-v1/create", login(totpSecret=TOTP))
    answers: list[Any] = [made, await roles.owner.call("vault-v1/create", card())]
    answers.append(await roles.admin.call("vault-v1/list"))
    answers.append(await roles.member.call("vault-v1/list_names"))
    answers.append(await roles.admin.call("vault-v1/read", {"itemId": made["id"]}))
    answers.append(
        await roles.admin.call("vault-v1/update", {"itemId": made["id"], "password": MASK})
    )
    # A refusal that names the field says nothing of the value.
    with pytest.raises(TeamApiCallError) as caught:
        await roles.admin.call(
            "vault-v1/create", {"item": {**card()["item"], "number": CARD[:-1] + "2"}}
        )
    answers.append(caught.value.message)
    seen = repr(answers)
    assert "vault item added" in [r.getMessage() for r in caplog.records]
    seen += "\n".join(f"{r.getMessage()} {vars(r)!r}" for r in caplog.records)
    async with server.builtin.services.db.read() as conn:
        seen += repr((await conn.execute(sa.select(vault_items))).all())
    digits = CARD.replace(" ", "")
    for secret in (PASSWORD, PASSWORD[4:-4], TOTP, digits, digits[:12], CARD):
        assert secret not in seen, secret
    stored = await asyncio.to_thread(database_bytes, tmp_path)
    for secret in (PASSWORD, TOTP, digits):
        assert secret.encode() not in stored


async def test_another_team_sees_and_touches_nothing(
    server: RunningHub, roles: Roles, tmp_path: Path
) -> None:
    made = await roles.admin.call("vault-v1/create", login())
    await server.create_owner("b@example.com", "Team B")
    outsider = await peer_member(server, "b@example.com", tmp_path)
    connection = await outsider.connect(server.builtin.services.host_id)
    try:
        assert (await connection.call("vault-v1/list"))["items"] == []
        assert (await connection.call("vault-v1/list_names"))["items"] == []
        ref = {"itemId": made["id"]}
        for route, args in (
            ("vault-v1/read", ref),
            ("vault-v1/update", {**ref, "password": "stolen"}),
            ("vault-v1/delete", ref),
        ):
            assert await refused(connection, route, args) == "vaultItemNotFound", route
        vault = server.builtin.services.vault
        assert await vault.open_secret(roles.team_id, made["id"], "password") == PASSWORD
        assert len((await roles.member.call("vault-v1/list_names"))["items"]) == 1
    finally:
        await connection.close()
        await outsider.hub.close()
