"""Live view over real aiortc peers and real Chromium."""

from __future__ import annotations

import io

from peer.live_view import open_view
from tests.host.live.conftest import Watching


def jpeg_size(data: bytes) -> tuple[int, int]:
    """Width and height from a JPEG's start-of-frame marker."""
    stream = io.BytesIO(data)
    assert stream.read(2) == b"\xff\xd8"
    while True:
        marker, length = stream.read(2), int.from_bytes(stream.read(2), "big")
        if marker[1] in (0xC0, 0xC1, 0xC2):
            stream.read(1)
            height, width = (
                int.from_bytes(stream.read(2), "big"),
                int.from_bytes(stream.read(2), "big"),
            )
            return width, height
        stream.read(length - 2)


async def test_frames_arrive_as_jpeg_with_the_headers_size(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    assert frame.jpeg[:2] == b"\xff\xd8"
    assert jpeg_size(frame.jpeg) == (frame.width, frame.height)
    second = await view.next_frame() if not view.frames.empty() else frame
    assert second.sequence >= frame.sequence
    view.close()


async def test_a_click_in_fractions_lands_on_the_button(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    frame = await view.next_frame()
    await view.take()
    view.click(100 / frame.width, 50 / frame.height)
    page = watching.tab.page
    assert page is not None
    await page.wait_for_function("document.getElementById('b').textContent === 'clicked'")
    view.close()
