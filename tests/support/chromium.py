"""The Chromiums of the suite: the headless shell, for a person's browser in the tests and
for hosts started in a test's own process unless told otherwise, and the full browser, the
product's default, where the two differ."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.async_api import Browser, Playwright

from server.config import load_settings
from server.host.chromium import CLOSED_NETWORK_FLAGS, find_chromium


async def launch_chromium(playwright: Playwright, *, full: bool = False) -> Browser:
    """A person's Chromium, headless, with the flags of a closed network: the headless shell
    (the web client walks took a quarter less CPU than in the full browser), or with
    ``full`` the host's Chromium, for what the shell does otherwise (it denies every
    notification permission before a page asks)."""
    if full:
        executable = find_chromium(load_settings().host.chromium)
        if executable is None:
            pytest.fail("no Chromium found: run `make chromium` or set CREWHOST_CHROMIUM")
    else:
        executable = Path(installed("chromium-headless-shell"))
    return await playwright.chromium.launch(
        executable_path=str(executable),
        headless=True,
        args=["--no-sandbox", *CLOSED_NETWORK_FLAGS],
    )


def installed(name: str) -> str:
    """The path of Debian's ``chromium`` or ``chromium-headless-shell``."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (make chromium installs it)")
    return found


def full_browser() -> str:
    """The full browser, the product's default: for a test about what the headless shell
    does otherwise (the PAC script, a profile's proxy and its sign-in, WebRTC's flags)."""
    return installed("chromium")
