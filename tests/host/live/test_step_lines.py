"""What a step says: no query, hash or record codes in a page's path; a press names the
control's role and name, and nothing for a press outside a control or on a secret field."""

from __future__ import annotations

import pytest

from server.host.browser.partitions import Partition
from server.host.browser.protection_state import Protection
from server.host.browser.tabs import Tab
from server.host.live.steps import is_code, page_line, press_line, recordable


@pytest.mark.parametrize(
    ("part", "code"),
    [
        ("12345", True),
        ("7", True),
        ("3f2b8c1e-1a2b-4c3d-9e8f-0123456789ab", True),
        ("a1b2c3d4e5f6a7b8", True),
        ("INV-2024-0042", True),
        ("orders", False),
        ("v2", False),
        ("settings", False),
        ("html5", False),
    ],
)
def test_code_like_path_parts(part: str, code: bool) -> None:
    assert is_code(part) is code


def test_a_page_line_keeps_host_path_and_title_only() -> None:
    line = page_line("https://Shop.Example.com/orders/48213/items?token=abc#pay", "Order  48213")
    assert line == 'opened shop.example.com/orders/:id/items "Order 48213"'
    assert page_line("http://127.0.0.1:8080/", "") == "opened 127.0.0.1/"


@pytest.mark.parametrize(
    "url", ["about:blank", "file:///etc/passwd", "data:text/html,x", "chrome://version"]
)
def test_a_page_that_is_not_http_is_no_step(url: str) -> None:
    assert page_line(url, "title") is None


def test_a_press_line_names_the_control() -> None:
    assert press_line({"role": "button", "name": "Save"}) == 'pressed button "Save"'
    assert press_line({"role": "textbox", "name": ""}) == "pressed textbox"
    assert press_line(None) is None
    assert press_line({"secret": True}) is None


def tab(partition: Partition, owner: str | None = "agent", *, secret: bool = False) -> Tab:
    made = Tab(
        id="tab",
        team_id="team",
        partition=partition,
        owner_agent_id=owner,
        owner_thread_id=None,
        opener_tab_id=None,
        url="https://example.com/",
        last_used=0.0,
    )
    if secret:
        made._protection = Protection.ENTERING  # as browser.protection sets it
    return made


@pytest.mark.parametrize(
    ("made", "url", "records"),
    [
        (tab(Partition.shared()), "https://example.com/", True),
        (tab(Partition.for_agent("agent")), "http://127.0.0.1:8080/x", True),
        (tab(Partition.shared(), owner=None), "https://example.com/", False),
        (tab(Partition.private()), "https://example.com/", False),
        (tab(Partition.shared(), secret=True), "https://example.com/", False),
        (tab(Partition.shared()), "about:blank", False),
        (tab(Partition.shared()), "file:///etc/hosts", False),
    ],
    ids=[
        "agent-tab",
        "own-partition",
        "no-owner",
        "private-sign-in",
        "secure-entry",
        "blank",
        "file",
    ],
)
def test_which_tabs_record_steps(made: Tab, url: str, records: bool) -> None:
    assert recordable(made, url) is records


def test_a_sign_in_link_and_a_reset_token_are_no_step_secret() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    magic = page_line(f"https://app.example.com/auth/magic/{jwt}", "Signing you in")
    assert magic == 'opened app.example.com/auth/magic/:token "Signing you in"'
    reset = page_line("https://example.com/reset/hWzqKcPmRtLfXvBnJgSdYaEuOiTrZwQe", "Reset")
    assert reset == 'opened example.com/reset/:token "Reset"'


def test_a_page_title_is_blanked_in_the_step() -> None:
    line = page_line("https://example.com/welcome", "Your password is Tr0ub4dor")
    assert line == 'opened example.com/welcome "Your password is [redacted]"'
