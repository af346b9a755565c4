"""The Vault, Proxies and Web search screens of the web client, against ``crewhost serve``.

An admin adds a vault login (its password never visible again), a proxy in front of a
tinyproxy the test starts (its password a mask; a save after another admin's change is
refused and shows the proxy anew), gives it to a named profile whose open tab the change
closes (after the question), and sets a search key; a member sees the same screens
without a control, with the reasons.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_web_client import open_host_screen
from tests.support.sites import Site
from tests.support.upstreams import tinyproxy
from tests.support.web_client import (
    DESKTOP,
    NEW_TAB_SECONDS,
    Crewhost,
    HubApi,
    Screens,
    owner_peer,
    sign_in_context,
    until,
)

pytestmark = pytest.mark.e2e

ADMIN = "vault-admin@example.com"
MEMBER = "vault-member@example.com"
LOGIN_PASSWORD = "typed-in-the-vault-form-7"
PROXY_USER, PROXY_PASSWORD = "agent", "proxy-pass-3"
SEARCH_KEY = "brave-key-typed-in-the-web-client"
MASK = "\u2022" * 8


async def shows_nowhere(page: Page, secret: str) -> None:
    """Neither the page's markup nor any input's value holds ``secret``."""
    assert secret not in await page.content()
    values = await page.evaluate(
        "[...document.querySelectorAll('input, textarea')].map(i => i.value)"
    )
    assert all(secret not in value for value in values), values


def via_header(site: Site, path: str) -> str:
    headers = {k.lower(): v for k, v in site.headers_of(path).items()}
    return headers.get("via", "")


async def test_an_admin_manages_the_vault_proxies_and_search_and_a_member_only_reads(
    crewhost: Crewhost,
    browser: Browser,
    hub_api: HubApi,
    site: Site,
    screens: Screens,
    tmp_path: Path,
) -> None:
    team = await hub_api.new_team("Crew Keys")
    await team.add_member(ADMIN, "Ada", role="admin")
    await team.add_member(MEMBER, "Max")
    async with owner_peer(team, tmp_path) as owner:
        work = await owner.call("browser-profiles-v1/create", {"name": "Work"})
        await owner.call(
            "browser-control-v1/new_tab",
            {"url": "about:blank", "profileId": work["id"], "private": False},
            wait_seconds=NEW_TAB_SECONDS,
        )

        context = await browser.new_context(viewport=DESKTOP)
        await sign_in_context(context, crewhost, ADMIN)
        page = await context.new_page()
        await open_host_screen(page, crewhost, team, section="Vault")

        # A login: the password leaves its input as it is sent and never shows again.
        vault = page.locator('section[aria-label="Vault"]')
        await vault.get_by_role("button", name="Add to the vault").click()
        form = vault.get_by_role("form", name="New login")
        await form.get_by_label("Name", exact=True).fill("Shop")
        await form.get_by_label("Sites").fill("https://shop.example/sign-in")
        await form.get_by_label("User name").fill("ada")
        await form.get_by_label("Password").fill(LOGIN_PASSWORD)
        await form.get_by_role("button", name="Add").click()
        row = vault.locator(".vault-row").filter(has_text="Shop")
        await expect(row).to_contain_text("Password set")
        await expect(row).to_contain_text("https://shop.example")
        await shows_nowhere(page, LOGIN_PASSWORD)
        await row.get_by_role("button", name="Edit").click()
        await expect(row.get_by_label("Password")).to_have_value(MASK)
        await row.get_by_label("User name").fill("ada.l")
        await row.get_by_role("button", name="Save").click()
        await expect(row).to_contain_text("ada.l")
        await expect(row).to_contain_text("Password set")  # the mask kept it
        await shows_nowhere(page, LOGIN_PASSWORD)
        await screens.save(page, "admin-vault")

        async with tinyproxy(
            tmp_path, outgoing="127.0.0.2", sign_in=(PROXY_USER, PROXY_PASSWORD)
        ) as upstream:
            # A proxy with a sign-in: listed by its host, the password only as "saved".
            await page.get_by_role("tab", name="Proxies").click()
            proxies = page.locator('section[aria-label="Proxies"]')
            adding = proxies.get_by_role("form", name="Add a proxy")
            await adding.get_by_label("Address").fill(
                f"http://{PROXY_USER}@127.0.0.1:{upstream.port}"
            )
            await adding.get_by_label("Password").fill(PROXY_PASSWORD)
            await adding.get_by_role("button", name="Add proxy").click()
            proxy_row = proxies.locator(".proxy-row")
            await expect(proxy_row).to_have_count(1)
            await expect(proxy_row).to_contain_text("Password saved")
            await expect(proxy_row).to_contain_text("No profile uses it.")
            await shows_nowhere(page, PROXY_PASSWORD)
            address = f"http://{PROXY_USER}@127.0.0.1:{upstream.port}"
            await proxy_row.get_by_role("button", name="Edit").click()
            await expect(proxy_row.get_by_label("Password")).to_have_value(MASK)
            await expect(proxy_row.get_by_label("Address")).to_have_value(address)

            # Another admin changes it meanwhile: this save is refused, in words, and the
            # proxy shows as it is now.
            listed = (await owner.call("browser-proxies-v1/list"))["proxies"]
            moved = f"http://{PROXY_USER}@127.0.0.1:{upstream.port + 1}"
            await owner.call(
                "browser-proxies-v1/update",
                {
                    "id": listed[0]["id"],
                    "previousAddress": address,
                    "address": moved,
                    "keepPassword": True,
                },
            )
            # Another port of the same host: the mask may stay, and the save goes out.
            other_port = address.replace(f":{upstream.port}", f":{upstream.port + 2}")
            await proxy_row.get_by_label("Address").fill(other_port)
            await proxy_row.get_by_role("button", name="Save").click()
            await expect(proxies).to_contain_text("Someone else changed this proxy meanwhile.")
            await expect(proxy_row.locator(".proxy-address")).to_have_text(moved)

            # Edited back with the mask left alone: the saved password stays (the tab
            # below signs in with it).
            await proxy_row.get_by_role("button", name="Edit").click()
            await proxy_row.get_by_label("Address").fill(address)
            await proxy_row.get_by_role("button", name="Save").click()
            await expect(proxy_row.locator(".proxy-address")).to_have_text(address)
            await expect(proxy_row).to_contain_text("Password saved")
            await shows_nowhere(page, PROXY_PASSWORD)
            await screens.save(page, "admin-proxies")

            # Giving it to Work closes Work's open tab: the question comes first.
            await page.get_by_role("tab", name="Browser profiles").click()
            choice = page.get_by_label("Proxy of Work")
            await choice.select_option(label="127.0.0.1")
            question = page.get_by_role("group", name=re.compile(r"^Close 1 open tab\?"))
            await expect(question).to_be_visible()
            await screens.save(page, "admin-profile-proxy-question")
            await question.get_by_role("button", name="Close tabs and change").click()
            await expect(question).to_have_count(0)
            await expect(choice).to_have_value(re.compile(r"^proxy-"))

            async def work_tab_closed() -> bool:
                tabs = (await owner.call("browser-control-v1/list_tabs"))["tabs"]
                return all(t["partitionLabel"] != "Work" for t in tabs)

            await until(work_tab_closed)
            # Work's next tab reaches the site through the tinyproxy, signed in.
            await owner.call(
                "browser-control-v1/new_tab",
                {"url": site.url("/press"), "profileId": work["id"], "private": False},
                wait_seconds=NEW_TAB_SECONDS,
            )
            assert "tinyproxy" in via_header(site, "/press")

            # The delete question names the profile that moves to Automatic.
            await page.get_by_role("tab", name="Proxies").click()
            await proxy_row.get_by_role("button", name="Delete").click()
            asked = proxy_row.get_by_role("group")
            await expect(asked).to_have_attribute(
                "aria-label",
                "Delete the proxy 127.0.0.1? The profile Work moves to Automatic, "
                "and 1 open tab closes.",
            )
            await screens.save(page, "admin-proxy-delete-question")
            await asked.get_by_role("button", name="Cancel").click()

        # Web search: Brave with a key, never shown back.
        await page.get_by_role("tab", name="Web search").click()
        search = page.locator('section[aria-label="Web search"]')
        await search.get_by_label("Engine").select_option("brave")
        await search.get_by_label("Brave Search API key").fill(SEARCH_KEY)
        await search.get_by_role("button", name="Save").click()
        await expect(search.locator('[data-key-set="true"]')).to_have_text("Key set")
        await expect(search.get_by_role("status")).to_have_text("Saved.")
        await shows_nowhere(page, SEARCH_KEY)
        settings = await owner.call("web-search-v1/get")
        assert (settings["engine"], settings["keySet"]) == ("brave", True)
        await screens.save(page, "admin-web-search")
        await context.close()

    member = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(member, crewhost, MEMBER)
    page = await member.new_page()
    await open_host_screen(page, crewhost, team, section="Vault")
    vault = page.locator('section[aria-label="Vault"]')
    await expect(vault.get_by_text("Only admins and owners see and change")).to_be_visible()
    await expect(vault.locator("[data-vault-item]")).to_have_text(["ShopLogin"])
    await expect(vault.get_by_role("button")).to_have_count(0)
    await screens.save(page, "member-vault")

    await page.get_by_role("tab", name="Proxies").click()
    proxies = page.locator('section[aria-label="Proxies"]')
    await expect(proxies.get_by_text("Only admins and owners see and change")).to_be_visible()
    await expect(proxies.locator(".admin-row")).to_have_text([re.compile(r"^Work127\.0\.0\.1$")])
    await expect(proxies.locator("button, input, select")).to_have_count(0)
    await screens.save(page, "member-proxies")

    await page.get_by_role("tab", name="Browser profiles").click()
    await expect(page.get_by_text("Proxy: 127.0.0.1")).to_be_visible()
    await expect(page.locator(".proxy-select")).to_have_count(0)

    await page.get_by_role("tab", name="Web search").click()
    search = page.locator('section[aria-label="Web search"]')
    await expect(search.get_by_text("Only admins and owners change this")).to_be_visible()
    await expect(search).to_contain_text("Brave Search")
    await expect(search.locator("button, input, select")).to_have_count(0)
    await screens.save(page, "member-web-search")
    await member.close()
