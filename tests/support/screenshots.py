"""Screens compared with their reference images, checked in under tests/e2e/screenshots/.

A screen is shot at 1280x800 and at 390x844 with what changes from run to run (times,
avatars picked from ids) masked; each shot is compared pixel by pixel with its reference,
with a small tolerance for anti-aliasing. A shot that differs is saved beside its
reference as ``<screen>-<size>.actual.png`` and named, with how much of it differs.
``CREWHOST_UPDATE_SCREENSHOTS=1`` (``make screenshots``) writes the references instead.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageChops
from playwright.async_api import Page, ViewportSize

from tests.support.web_client import DESKTOP, PHONE, ROOT

REFERENCES = ROOT / "tests" / "e2e" / "screenshots"

UPDATE = os.environ.get("CREWHOST_UPDATE_SCREENSHOTS") == "1"

# A channel that moved by at most this much is the same pixel (anti-aliasing, gradients).
CHANNEL_TOLERANCE = 24

# The share of a shot's pixels that may differ beyond the tolerance.
DIFFERING_SHARE = 0.0005

# What differs from run to run whatever the data: times, and avatars tinted from ids.
ALWAYS_MASKED = ("time", ".avatar", "[data-screenshot-mask]")
# A time's text changes its width (22:00 is wider than 21:11): each takes one fixed width,
# so the masked box, and what follows it on the line, stand in the same place every run.
FIXED_TIMES = (
    "time { display: inline-block !important; width: 9em !important; overflow: hidden"
    " !important; white-space: nowrap !important; vertical-align: bottom !important }"
)

# Two frames after a change of size: layout, then what reacts to it (follow-to-end).
SETTLED = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def size_name(size: ViewportSize) -> str:
    return f"{size['width']}x{size['height']}"


def difference(reference: Image.Image, actual: Image.Image) -> float:
    """The share of pixels that differ beyond the tolerance (1.0 when the sizes differ)."""
    if reference.size != actual.size:
        return 1.0
    delta = ImageChops.difference(reference.convert("RGB"), actual.convert("RGB"))
    # The largest channel change of each pixel, then whether it passes the tolerance.
    widest = Image.eval(delta.split()[0], lambda v: v)
    for channel in delta.split()[1:]:
        widest = ImageChops.lighter(widest, channel)
    differing = widest.point(lambda v: 255 if v > CHANNEL_TOLERANCE else 0)
    histogram = differing.histogram()
    return histogram[255] / (actual.size[0] * actual.size[1])


@dataclass
class ScreenshotCheck:
    """Shoots screens at both sizes and keeps what differed from its reference."""

    folder: Path = REFERENCES
    update: bool = UPDATE
    differed: list[str] = field(default_factory=list)

    async def matches(
        self, page: Page, screen: str, *, full_page: bool = True, mask: tuple[str, ...] = ()
    ) -> None:
        """Shoot ``screen`` at each size and compare (or, updating, keep) it; the page is
        left at 1280x800."""
        self.folder.mkdir(parents=True, exist_ok=True)
        await page.add_style_tag(content=FIXED_TIMES)
        # Hidden rather than painted over: a mask is drawn at an element's box even where a
        # scrolled list clips it, so where the list stood decided what the shot showed.
        hidden = ", ".join((*ALWAYS_MASKED, *mask))
        await page.add_style_tag(content=f"{hidden} {{ visibility: hidden !important }}")
        for size in (DESKTOP, PHONE):
            await page.set_viewport_size(size)
            # No hover or caret left from the walk that opened the screen.
            await page.mouse.move(0, 0)
            await page.evaluate(SETTLED)
            shot = await page.screenshot(
                full_page=full_page,
                animations="disabled",
                caret="hide",
                scale="css",
            )
            self._compare(f"{screen}-{size_name(size)}", shot)
        await page.set_viewport_size(DESKTOP)
        await page.evaluate(SETTLED)

    def _compare(self, name: str, shot: bytes) -> None:
        reference_path = self.folder / f"{name}.png"
        actual_path = self.folder / f"{name}.actual.png"
        if self.update:
            reference_path.write_bytes(shot)
            actual_path.unlink(missing_ok=True)
            return
        if not reference_path.is_file():
            actual_path.write_bytes(shot)
            self.differed.append(f"{name}: no reference image (run `make screenshots`)")
            return
        actual = Image.open(io.BytesIO(shot))
        with Image.open(reference_path) as reference:
            share = difference(reference, actual)
            sizes = (reference.size, actual.size)
        if share <= DIFFERING_SHARE:
            actual_path.unlink(missing_ok=True)
            return
        actual_path.write_bytes(shot)
        if sizes[0] != sizes[1]:
            detail = f"size {sizes[1][0]}x{sizes[1][1]}, reference {sizes[0][0]}x{sizes[0][1]}"
        else:
            detail = f"{share:.2%} of pixels differ (tolerance {DIFFERING_SHARE:.2%})"
        self.differed.append(f"{name}: {detail}; see {actual_path.relative_to(ROOT)}")

    def assert_matched(self) -> None:
        """Fail naming every shot that differed from its reference, and by how much."""
        assert not self.differed, "screens differ from their references:\n" + "\n".join(
            self.differed
        )
