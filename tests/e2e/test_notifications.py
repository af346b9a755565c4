"""The Notifications section and the bell in the web client, against ``crewhost serve``.

The owner sets the team's mail server (an ``aiosmtpd`` server the test starts on
loopback), its password never shown again, and sends a test mail that arrives; a member
sets their email choices, sees no mail server form, and the bell is there with nothing
unread; no page asks for the browser's notification permission on load.
"""

from __future__ import annotations

import pytest
from playwright.async_api import Browser, Page, expect

from tests.e2e.test_web_client import open_host_screen
from tests.support.fakes.smtp import FakeSmtpServer
from tests.support.web_client import DESKTOP, Crewhost, HubApi, Screens, sign_in_context

# The headless shell denies the notification permission before any page asks: the full
# browser tells whether a page asked.
pytestmark = [pytest.mark.e2e, pytest.mark.full_browser]

MEMBER = "notify-member@example.com"
SMTP_PASSWORD = "typed-in-the-mail-form-4"


async def shows_nowhere(page: Page, secret: str) -> None:
    assert secret not in await page.content()
    values = await page.evaluate("[...document.querySelectorAll('input')].map(i => i.value)")
    assert all(secret not in value for value in values), values


async def test_the_owner_sets_the_mail_server_and_a_member_chooses_email(
    crewhost: Crewhost, browser: Browser, hub_api: HubApi, screens: Screens
) -> None:
    team = await hub_api.new_team("Crew Notices")
    await team.add_member(MEMBER, "Mo")
    async with FakeSmtpServer(login=("mailer", SMTP_PASSWORD)) as smtp:
        context = await browser.new_context(viewport=DESKTOP)
        await sign_in_context(context, crewhost, team.owner_email)
        page = await context.new_page()
        await open_host_screen(page, crewhost, team, section="Notifications")
        await expect(page.get_by_role("button", name="Notifications")).to_be_visible()

        server = page.locator('section[aria-label="Email server"]')
        await server.get_by_label("Server", exact=True).fill("127.0.0.1")
        await server.get_by_label("Port").fill(str(smtp.port))
        await server.get_by_label("Security").select_option("none")
        await server.get_by_label("User name").fill("mailer")
        await server.get_by_label("Mail server password").fill(SMTP_PASSWORD)
        await server.get_by_label("From address").fill("crew@example.com")
        await server.get_by_role("button", name="Save").click()
        await expect(server.locator("[data-password-set]")).to_have_text("Password set")
        await shows_nowhere(page, SMTP_PASSWORD)
        await server.get_by_label("Send a test mail to").fill("owner-inbox@example.com")
        await server.get_by_role("button", name="Send a test mail").click()
        await expect(server).to_contain_text("A test mail went to owner-inbox@example.com.")
        [mail] = await smtp.wait_for(1)
        assert mail.recipients == ["owner-inbox@example.com"]
        assert mail.subject == "Crewhost test mail"
        assert smtp.logins == ["mailer"]
        await screens.save(page, "notifications-owner")
        assert await page.evaluate("Notification.permission") == "default"
        # Moved to another host with the password left alone: the saved password does not
        # go there. Removed, the save goes through.
        await server.get_by_label("Server", exact=True).fill("localhost")
        await server.get_by_role("button", name="Save").click()
        await expect(server).to_contain_text("Where the saved password or secret is sent")
        await expect(server.locator("[data-password-set]")).to_have_text("Password set")
        await server.get_by_label("Remove the saved password").check()
        await server.get_by_role("button", name="Save").click()
        await expect(server.locator("[data-password-set]")).to_have_text("No password")
        await context.close()

    context = await browser.new_context(viewport=DESKTOP)
    await sign_in_context(context, crewhost, MEMBER)
    page = await context.new_page()
    await open_host_screen(page, crewhost, team, section="Notifications")
    await expect(page.locator('section[aria-label="Email server"]')).to_have_count(0)
    choices = page.locator('section[aria-label="Notification preferences"]')
    await choices.get_by_label("Email address").fill("mo@example.com")
    await choices.get_by_label("Runs that finished").select_option("digest")
    await choices.get_by_role("button", name="Save").click()
    await expect(choices).to_contain_text("Saved.")
    await page.reload()
    await page.get_by_role("tab", name="Notifications", exact=True).click()
    await expect(choices.get_by_label("Email address")).to_have_value("mo@example.com")
    await expect(choices.get_by_label("Runs that finished")).to_have_value("digest")
    bell = page.locator(".bell-button")
    await expect(bell).to_have_attribute("data-unread", "0")
    await bell.click()
    await expect(page.get_by_role("dialog", name="Notifications")).to_contain_text("Nothing yet")
    await screens.save(page, "notifications-member")
    await context.close()
