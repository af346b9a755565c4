"""The identity pages see: a Chrome user agent, its language list and matching client hints.

Headless Chromium says ``HeadlessChrome`` and sends only the regional language;
some bot checks refuse both. We send what an installed Chrome of the same major
version sends: ``Chrome/<major>.0.0.0``, the base language after each regional
one, and client hints equal to ``navigator.userAgentData``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession, Page

# Chromium's GREASE brand: characters and versions picked from the major version.
_GREASE_CHARS = (" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_")
_GREASE_VERSIONS = ("8", "99", "24")


def accept_language(locale: str) -> str:
    """``en-GB`` → ``en-GB,en;q=0.9``; each base language once, after its first regional one."""
    languages = language_list(locale)
    parts = [languages[0]]
    q = 0.9
    for language in languages[1:]:
        parts.append(f"{language};q={q:.1f}")
        q = max(q - 0.1, 0.1)
    return ",".join(parts)


def language_list(locale: str) -> list[str]:
    """``en-GB,fr`` → ``["en-GB", "en", "fr"]``: what ``navigator.languages`` gives."""
    out: list[str] = []
    for raw in locale.split(","):
        language = raw.split(";")[0].strip()
        if not language:
            continue
        base = language.split("-")[0]
        for item in (language, base):
            if item not in out:
                out.append(item)
    return out or ["en-US", "en"]


def brands(major: int) -> list[dict[str, str]]:
    """The brand list Chromium builds for ``major``: GREASE and Chromium, in its order."""
    grease = {
        "brand": f"Not{_GREASE_CHARS[major % 11]}A{_GREASE_CHARS[(major + 1) % 11]}Brand",
        "version": _GREASE_VERSIONS[major % 3],
    }
    chromium = {"brand": "Chromium", "version": str(major)}
    return [grease, chromium] if major % 2 == 0 else [chromium, grease]


@dataclass(frozen=True)
class BrowserIdentity:
    """The user agent, languages and client hints of every page of one engine."""

    version: str
    locale: str = "en-GB"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def user_agent(self) -> str:
        return (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
            f"Chrome/{self.major}.0.0.0 Safari/537.36"
        )

    @property
    def accept_language(self) -> str:
        return accept_language(self.locale)

    def context_options(self) -> dict[str, Any]:
        """Options for every Playwright context, so popups start with the same identity."""
        return {
            "user_agent": self.user_agent,
            "locale": language_list(self.locale)[0],
            "extra_http_headers": {"Accept-Language": self.accept_language},
            # A download is refused as it starts: none is wanted, and an accepted one would
            # write the whole body to disk however large, in any team's page.
            "accept_downloads": False,
        }

    def metadata(self) -> dict[str, Any]:
        """``userAgentMetadata`` for CDP: the brands Chromium itself would send."""
        short = brands(self.major)
        full = [
            {
                "brand": b["brand"],
                "version": self.version if b["brand"] == "Chromium" else f"{b['version']}.0.0.0",
            }
            for b in short
        ]
        return {
            "brands": short,
            "fullVersionList": full,
            "platform": "Linux",
            "platformVersion": "",
            "architecture": "x86",
            "bitness": "64",
            "model": "",
            "mobile": False,
        }

    async def apply(self, page: Page) -> CDPSession:
        """Sets the full override on ``page``; keep the session: detaching drops the override."""
        session = await page.context.new_cdp_session(page)
        await self.override(session)
        return session

    async def override(self, session: CDPSession) -> None:
        """Sets the full override on the page of ``session``, for as long as it is attached."""
        await session.send(
            "Emulation.setUserAgentOverride",
            {
                "userAgent": self.user_agent,
                "acceptLanguage": ",".join(language_list(self.locale)),
                "userAgentMetadata": self.metadata(),
            },
        )
