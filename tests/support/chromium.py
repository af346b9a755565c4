"""The Chromiums of the suite: the host's, for tests that drive a browser of their own, and
the headless shell that hosts started in a test's own process run unless told otherwise."""

from __future__ import annotations

import shutil

import pytest
from playwright.async_api import Browser, Playwright

from server.config import load_settings
from server.host.chromium import CLOSED_NETWORK_FLAGS, find_chromium


async def launch_chromium(playwright: Playwright) -> Browser:
    """The host's Chromium, headless, with the flags of a closed network."""
    executable = find_chromium(load_settings().host.chromium)
    if executable is None:
        pytest.fail("no Chromium found: run `make chromium` or set CREWHOST_CHROMIUM")
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
