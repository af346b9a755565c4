"""Finding a Chromium to drive: the configured one, Playwright's build, or the system's.

``python -m server.host.chromium --ensure`` prints the path, and as root on Debian
installs the ``chromium`` package when none is found (the set-up command uses it).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

from server.common.errors import Unavailable
from server.config import load_settings

# Flags a closed network needs (no calls home at start) and a root user needs.
CLOSED_NETWORK_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
# WebRTC's UDP only through a proxy, and the browsers' proxies (the filtering proxy, a
# profile's proxy or relay) carry none: a page's STUN, TURN and ICE checks send nothing,
# to the host's loopback or anywhere. A command-line flag of the browser process, so it
# holds for every context of it; Chromium reads the first, Playwright's builds the second.
WEBRTC_FLAGS = (
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome")


def _playwright_builds() -> list[Path]:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache/ms-playwright"))
    found = glob.glob(str(root / "chromium-*/chrome-linux*/chrome"))
    return [Path(p) for p in sorted(found, reverse=True)]


def find_chromium(configured: str | None) -> Path | None:
    """The first usable Chromium: configured, then Playwright's build, then the system's."""
    if configured:
        path = Path(configured)
        return path if path.is_file() and os.access(path, os.X_OK) else None
    for path in _playwright_builds():
        if os.access(path, os.X_OK):
            return path
    for name in SYSTEM_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


def is_headless_shell(path: Path) -> bool:
    """Whether ``path`` is Chromium's headless shell (Debian's chromium-headless-shell,
    Playwright's chromium_headless_shell) rather than the full browser.

    The shell opens a tab and loads a page in about two thirds of the full browser's time,
    but takes no ``--proxy-pac-url``: the address guard gives it its filtering proxy
    instead of the PAC script.
    """
    return "headless_shell" in path.name or "headless-shell" in path.name


def ensure_chromium(configured: str | None) -> Path:
    """Find Chromium; as root with apt, install Debian's package when none is there."""
    path = find_chromium(configured)
    if path is not None:
        return path
    if configured:
        raise Unavailable(f"CREWHOST_CHROMIUM points at {configured}, which is not an executable")
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env)  # noqa: S607
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "chromium"],  # noqa: S607
            check=True,
            env=env,
        )
        path = find_chromium(None)
        if path is not None:
            return path
    raise Unavailable(
        "no Chromium found: install Debian's chromium package or set CREWHOST_CHROMIUM"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="Find (or install) the Chromium Crewhost drives.")
    parser.add_argument("--ensure", action="store_true", help="install it when missing (root)")
    args = parser.parse_args()
    configured = load_settings().host.chromium
    try:
        path = ensure_chromium(configured) if args.ensure else find_chromium(configured)
    except Unavailable as exc:
        print(f"crewhost: {exc.message}", file=sys.stderr)
        return 1
    if path is None:
        print("crewhost: no Chromium found", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
