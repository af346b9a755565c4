"""Headless Chromium for tests that drive a browser of their own: the one the host uses."""

from __future__ import annotations

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
