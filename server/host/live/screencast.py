"""One CDP screencast per watched tab, fanned out to every viewer.

The screencast starts for the first viewer and stops after the last. Each frame
is encoded once and the same bytes go to every viewer. A viewer whose channel is
backed up gets only the newest frame when it drains: never a growing queue.

Chromium captures and encodes a frame each time the page paints, as long as fewer than
three of its frames wait for an acknowledgement. The acknowledgements go back at the
rate frames may be sent, so a page that paints 60 times a second costs Chromium the
frames the viewers get, not twice as many that would be thrown away. What Chromium did
not capture while three waited is not lost: when a page then stands still, the frame
that shows it is asked for again; and once a person's input stops, the frame that shows
what it did is asked for in any case.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from server.common.protocol.view import encode_frame
from server.common.tasks import BackgroundTasks
from server.host.metrics import FrameCounts

log = logging.getLogger(__name__)

# Above this many unsent bytes on a viewer's channel, frames wait (newest only).
BACKLOG_BYTES = 256 * 1024
# How long a stopping screencast waits for its session to detach.
DETACH_SECONDS = 2.0
# For this long after the holder's input, frames may go out at twice the cap, so the frame
# that shows what the input did is not held back behind one that came just before it.
INPUT_BOOST_SECONDS = 0.25
# Chromium captures no frame while this many of its frames wait for an acknowledgement.
CHROMIUM_IN_FLIGHT = 3
# When no frame follows the acknowledgement that ended such a wait within this long (or
# twice the longest such wait lately, at most a second: on a loaded machine a frame takes
# longer to come), the page may have changed during it and then stood still: its frame is
# asked for again.
RECAPTURE_AFTER_SECONDS = 0.1
RECAPTURE_MOST_SECONDS = 1.0
# How much of the longest recent wait still counts at the next frame.
WAIT_MEMORY = 0.8
# When the holder's input has stopped for this long, the page's frame is asked for once
# more. Which of Chromium's captures it held back is only estimated here (above), and on a
# loaded machine the estimate can miss one: the frame that shows what a person's own click
# or key did must never be the one lost.
INPUT_SETTLE_SECONDS = 0.5
# Chromium stamps a frame with its compositor's time, which can run a few ms ahead of the
# host's clock: a frame stamped this soon after an acknowledgement went may have been on
# its way during it.
STAMP_SLACK_SECONDS = 0.02


class FrameChannel(Protocol):
    """What a viewer needs of an RTCDataChannel."""

    @property
    def bufferedAmount(self) -> int: ...

    @property
    def readyState(self) -> str: ...

    def send(self, data: bytes | str) -> None: ...


class Viewer:
    """One viewer's frame sink: send now, or keep the newest frame until the channel drains."""

    def __init__(self, channel: FrameChannel, counts: FrameCounts) -> None:
        self.channel = channel
        self.pending: bytes | None = None
        self.sent = 0
        self.replaced = 0
        self._counts = counts

    def offer(self, frame: bytes) -> None:
        if self.channel.readyState != "open":
            return
        if self.channel.bufferedAmount > BACKLOG_BYTES:
            if self.pending is not None:
                self.replaced += 1
                self._counts.dropped()
            self.pending = frame
            return
        self.channel.send(frame)
        self.sent += 1
        self._counts.sent()

    def closed(self) -> None:
        self._counts.view_closed(self.replaced)

    def drained(self) -> None:
        """The channel's buffer went low: send the newest frame that waited, if any."""
        frame, self.pending = self.pending, None
        if frame is not None:
            self.offer(frame)


class FrameWait:
    """How long a frame took to come after an acknowledgement that let Chromium capture
    again, lately: the frame is asked for again only after twice that, so a late frame on
    a loaded machine is not taken for a page that stood still (asking again restarts the
    screencast, and Chromium captures and encodes three frames more)."""

    def __init__(self) -> None:
        self.longest = 0.0

    def came_after(self, seconds: float) -> None:
        self.longest = max(seconds, self.longest * WAIT_MEMORY)

    def recapture_after(self) -> float:
        return min(RECAPTURE_MOST_SECONDS, max(RECAPTURE_AFTER_SECONDS, 2 * self.longest))


class TabScreencast:
    """The screencast of one tab's page."""

    def __init__(
        self,
        page: Page,
        *,
        quality: int,
        max_fps: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.page = page
        self._clock = clock
        self._quality = quality
        self._min_interval = 1.0 / max_fps
        self.viewers: set[Viewer] = set()
        self.session: CDPSession | None = None
        self.sequence = 0
        self.width = 0
        self.height = 0
        # The page's size before a view set one, to give back when the last such view ends.
        self.own_size: tuple[int, int] | None = None
        self._last_sent = 0.0
        self._boost_until = 0.0
        self._newest: dict[str, Any] | None = None
        # The last frame sent, for a viewer who joins a running screencast: a still page
        # paints nothing new, and that viewer would wait for a frame that never comes.
        self._last_frame: bytes | None = None
        self._later: asyncio.TimerHandle | None = None
        # Chromium's frames not yet acknowledged, oldest first, and when the last one was.
        self._unacked: deque[int] = deque()
        self._last_ack = float("-inf")
        self._acking: asyncio.TimerHandle | None = None
        self._recapture: asyncio.TimerHandle | None = None
        self._settle: asyncio.TimerHandle | None = None
        # When the last acknowledgement that ended a wait went, until a frame follows it.
        self._released_at: float | None = None
        # At the last acknowledgement: when it went by the wall clock (Chromium's stamps are
        # wall-clock times), how many frames waited here, and how many captured before it
        # came after it (on their way then, and in flight for Chromium).
        self._ack_wall = float("-inf")
        self._waiting_at_ack = 0
        self._on_their_way = 0
        self._frame_wait = FrameWait()
        self._tasks = BackgroundTasks("screencast")

    @property
    def running(self) -> bool:
        return self.session is not None

    async def add(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)
        if self.session is not None and self._last_frame is not None:
            viewer.offer(self._last_frame)
        if self.session is None:
            self.session = await self.page.context.new_cdp_session(self.page)
            self.session.on("Page.screencastFrame", self._on_frame)
            await self.session.send(
                "Page.startScreencast", {"format": "jpeg", "quality": self._quality}
            )

    async def refresh(self) -> None:
        """Start the screencast again, which sends a frame at once: after a resize a still
        page may paint nothing new, and the viewers would keep the old size."""
        if self.session is None:
            return
        self._forget_unacked()  # a new screencast: Chromium counts none of them any more
        with contextlib.suppress(PlaywrightError):
            await self.session.send("Page.stopScreencast")
            await self.session.send(
                "Page.startScreencast", {"format": "jpeg", "quality": self._quality}
            )

    async def remove(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            await self.stop()

    async def stop(self) -> None:
        session, self.session = self.session, None
        self._last_frame = None
        if self._later is not None:
            self._later.cancel()
            self._later = None
        self._forget_unacked()
        if self._settle is not None:
            self._settle.cancel()
            self._settle = None
        if session is None:
            return
        with contextlib.suppress(PlaywrightError, TimeoutError):
            await session.send("Page.stopScreencast")
            # A detach waits while the page shows a JS dialog: the view (or the host
            # stopping) does not wait for someone to answer it.
            async with asyncio.timeout(DETACH_SECONDS):
                await session.detach()
        self._tasks.cancel()

    def input_given(self) -> None:
        """The holder's input is on its way to the page: the frames that follow go out sooner."""
        self._boost_until = self._clock() + INPUT_BOOST_SECONDS
        if self._acking is not None:  # the next acknowledgement goes sooner too
            self._acking.cancel()
            self._acking = None
            self._acknowledge_soon()

    def input_delivered(self) -> None:
        """The holder's input reached the page: once the input stops, its frame is asked for."""
        if self.session is None:
            return
        if self._settle is not None:
            self._settle.cancel()
        self._settle = asyncio.get_running_loop().call_later(
            INPUT_SETTLE_SECONDS, self._input_settled
        )

    def _input_settled(self) -> None:
        self._settle = None
        self._spawn(self.refresh())

    def _interval(self, now: float) -> float:
        return self._min_interval / 2 if now < self._boost_until else self._min_interval

    def _on_frame(self, params: dict[str, Any]) -> None:
        if self.session is None:
            return
        if self._recapture is not None:
            # Captured after Chromium could capture again: it shows the page as it is.
            self._recapture.cancel()
            self._recapture = None
        if self._released_at is not None:
            self._frame_wait.came_after(self._clock() - self._released_at)
            self._released_at = None
        captured = float(params["metadata"].get("timestamp") or 0.0)
        if captured and captured < self._ack_wall + STAMP_SLACK_SECONDS:
            # On its way while the last acknowledgement went: Chromium counted it in flight
            # then. With the frames that waited here, it may have counted as many as it
            # captures none beyond, and a change since, on a page that then stood still,
            # would never come: unless more frames follow, it is asked for again.
            self._on_their_way += 1
            if self._waiting_at_ack + self._on_their_way >= CHROMIUM_IN_FLIGHT:
                self._recapture_later()
        self._unacked.append(int(params["sessionId"]))
        self._acknowledge_soon()
        self._newest = params
        now = self._clock()
        interval = self._interval(now)
        wait = self._last_sent + interval - now
        if wait <= 0:
            if self._later is not None:
                self._later.cancel()
            self._send_newest()
        elif self._later is None:
            # Too soon after the last frame: the newest one goes out when the cap allows, so
            # the last state of a page that then stands still is never lost.
            self._later = asyncio.get_running_loop().call_later(wait, self._send_newest)

    def _acknowledge_soon(self) -> None:
        """Acknowledge the oldest waiting frame once the cap allows another frame."""
        if self._acking is not None or not self._unacked:
            return
        now = self._clock()
        wait = self._last_ack + self._interval(now) - now
        if wait <= 0:
            self._acknowledge_oldest()
        else:
            self._acking = asyncio.get_running_loop().call_later(wait, self._acknowledge_oldest)

    def _acknowledge_oldest(self) -> None:
        self._acking = None
        session = self.session
        if session is None or not self._unacked:
            return
        # Chromium captured nothing while this many waited: a change meanwhile may be lost.
        # (Frames still on their way count for Chromium too: ``_on_frame`` adds them.)
        waiting = len(self._unacked)
        self._last_ack = self._clock()
        self._ack_wall, self._waiting_at_ack, self._on_their_way = time.time(), waiting, 0
        self._spawn(session.send("Page.screencastFrameAck", {"sessionId": self._unacked.popleft()}))
        if waiting >= CHROMIUM_IN_FLIGHT:
            self._released_at = self._last_ack
            self._recapture_later()
        self._acknowledge_soon()

    def _recapture_later(self) -> None:
        """Ask for the page's frame again unless a frame comes first."""
        if self._recapture is not None:
            self._recapture.cancel()
        self._recapture = asyncio.get_running_loop().call_later(
            self._frame_wait.recapture_after(), self._capture_again
        )

    def _capture_again(self) -> None:
        """No frame came after a wait in which Chromium captured nothing: ask for one."""
        self._recapture = None
        self._released_at = None  # the frame asked for says nothing of how long one takes
        self._spawn(self.refresh())

    def _forget_unacked(self) -> None:
        for timer in (self._acking, self._recapture):
            if timer is not None:
                timer.cancel()
        self._acking = self._recapture = None
        self._released_at = None
        self._unacked.clear()
        self._ack_wall, self._waiting_at_ack, self._on_their_way = float("-inf"), 0, 0

    def _send_newest(self) -> None:
        self._later = None
        params, self._newest = self._newest, None
        if params is None or self.session is None:
            return
        self._last_sent = self._clock()
        metadata = params["metadata"]
        self.width = int(metadata["deviceWidth"])
        self.height = int(metadata["deviceHeight"])
        self.sequence += 1
        captured_ms = float(metadata.get("timestamp") or time.time()) * 1000
        frame = encode_frame(
            self.sequence, self.width, self.height, captured_ms, base64.b64decode(params["data"])
        )
        self._last_frame = frame
        for viewer in list(self.viewers):
            viewer.offer(frame)

    def _spawn(self, coroutine: Any) -> None:
        async def run() -> None:
            with contextlib.suppress(PlaywrightError):
                await coroutine

        self._tasks.start(run())
