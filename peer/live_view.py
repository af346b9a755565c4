"""Watching and steering a host's tab over a ``view:`` data channel."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from peer.connection import HostConnection
from server.common.protocol.capabilities import (
    BROWSER_VIEW,
    BROWSER_VIEW_CONTEXT_MENU,
    BROWSER_VIEW_CURSOR,
    BROWSER_VIEW_TAKE,
    BROWSER_VIEW_VIEWPORT,
)
from server.common.protocol.view import Frame, ViewOptions, decode_frame


class ViewClosed(Exception):
    """The host closed the view; ``code`` says why (tabNotFound, tabHoldsSecret, …)."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{reason} ({code})")
        self.code = code
        self.reason = reason


class LiveView:
    """One tab's view: frames arrive in ``frames`` (newest kept), messages in ``messages``."""

    def __init__(self, channel: Any, options: ViewOptions, *, keep_frames: int = 8) -> None:
        self.channel = channel
        self.options = options
        self.frames: asyncio.Queue[Frame] = asyncio.Queue(maxsize=keep_frames)
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.opened = asyncio.Event()
        self.closed = asyncio.Event()
        self.close_code: str | None = None
        self.close_reason = ""
        channel.on("message", self._on_message)
        channel.on("close", self.closed.set)

    def _on_message(self, raw: str | bytes) -> None:
        if isinstance(raw, bytes):
            frame = decode_frame(raw)
            if self.frames.full():
                self.frames.get_nowait()  # a slow reader sees the newest frames, not a backlog
            self.frames.put_nowait(frame)
            return
        message = json.loads(raw)
        if message.get("type") == "opened":
            self.opened.set()
        elif message.get("type") == "closed":
            self.close_code, self.close_reason = message.get("code"), message.get("reason", "")
            self.closed.set()
            self.channel.close()  # the host said why; this side ends the channel
        self.messages.put_nowait(message)

    async def wait_open(self, wait_seconds: float = 15) -> None:
        opened = asyncio.ensure_future(self.opened.wait())
        closed = asyncio.ensure_future(self.closed.wait())
        try:
            await asyncio.wait(
                {opened, closed}, timeout=wait_seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            opened.cancel()
            closed.cancel()
        if not self.opened.is_set():
            raise ViewClosed(
                self.close_code or "viewClosed", self.close_reason or "the view did not open"
            )

    async def next_frame(self, wait_seconds: float = 15) -> Frame:
        return await asyncio.wait_for(self.frames.get(), wait_seconds)

    def send(self, message: dict[str, Any]) -> None:
        self.channel.send(json.dumps(message))

    async def expect(self, *types: str, wait_seconds: float = 15) -> dict[str, Any]:
        """The next message of one of ``types`` (others are skipped)."""
        async with asyncio.timeout(wait_seconds):
            while True:
                message = await self.messages.get()
                if message.get("type") in types:
                    return message

    async def take(self) -> None:
        self.send({"type": "take"})
        reply = await self.expect("held", "error")
        if reply["type"] == "error":
            raise ViewClosed(reply["code"], reply["message"])

    async def release(self) -> None:
        self.send({"type": "release"})
        await self.expect("held")

    def pointer(self, action: str, x: float, y: float, **fields: Any) -> None:
        self.send({"type": "pointer", "action": action, "x": x, "y": y, **fields})

    def click(self, x: float, y: float, button: str = "left") -> None:
        self.pointer("move", x, y)
        self.pointer("down", x, y, button=button, clickCount=1)
        self.pointer("up", x, y, button=button, clickCount=1)

    def key(self, action: str, key: str, **fields: Any) -> None:
        self.send({"type": "key", "action": action, "key": key, **fields})

    def type_text(self, text: str) -> None:
        for char in text:
            self.key("down", char, text=char)
            self.key("up", char)

    def insert_text(self, text: str) -> None:
        """Text typed without keys of its own (composed, emoji), inserted whole at the caret."""
        self.send({"type": "text", "text": text})

    def resize(self, width: int, height: int) -> None:
        """Ask the host to hold the page at a new size (the viewer's panel changed)."""
        self.send({"type": "viewport", "width": width, "height": height})

    def paste(self, text: str) -> None:
        self.send({"type": "paste", "text": text})

    async def copy(self, action: str = "copy") -> dict[str, Any]:
        self.send({"type": action})
        return await self.expect("copied", "copyTooLarge", "error")

    def close(self) -> None:
        self.channel.close()


async def open_view(
    connection: HostConnection,
    tab_id: str,
    *,
    cursor: bool = False,
    menu: bool = False,
    viewport: tuple[int, int] | None = None,
    take: bool = False,
) -> LiveView:
    """Open a view of ``tab_id`` on an existing connection (no new negotiation needed);
    ``take`` opens it holding control (the way into a tab in secure entry for the person
    who takes it over).

    Raises ``NotServed`` when the host does not serve the view, or an option asked for.
    """
    await connection.require(
        BROWSER_VIEW,
        *([BROWSER_VIEW_CURSOR] if cursor else []),
        *([BROWSER_VIEW_CONTEXT_MENU] if menu else []),
        *([BROWSER_VIEW_VIEWPORT] if viewport else []),
        *([BROWSER_VIEW_TAKE] if take else []),
    )
    options = ViewOptions(tab_id, cursor=cursor, menu=menu, viewport=viewport, take=take)
    channel = connection.connection.createDataChannel(options.label(), ordered=True)
    view = LiveView(channel, options)
    await view.wait_open()
    return view
