"""One viewer's ``view:<tabId>`` channel: frames out; take control, input, clipboard and
context menus in.

Watching needs only that the member can see the tab. Input needs the member to
hold the tab through this view (take control); the tab registry alone knows who holds a
tab and through which views, and the view asks it at each input. Holding ends when the
channel closes. Input goes to
the page through CDP, outside the tab's tool queue, so watching never delays a
tool and a tool never delays the view.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError

from server.common.errors import Conflict, CrewhostError, Forbidden, InvalidArgument
from server.common.protocol.codec import utf8_size
from server.common.protocol.view import (
    MAX_CLIPBOARD,
    MAX_VIEW_MESSAGE,
    Closed,
    ContextMenu,
    Copied,
    Copy,
    CopyTooLarge,
    Cursor,
    Held,
    Key,
    MenuChoice,
    MenuItem,
    Opened,
    Paste,
    Pointer,
    Release,
    Resize,
    Take,
    Text,
    ViewError,
    ViewOptions,
    check_view_message_size,
    decode_view_message,
    error_message,
)
from server.common.tokens import new_id
from server.common.wire import WireModel
from server.host.browser.access import holds_secret, secret_view_allowed
from server.host.browser.callers import Caller
from server.host.live.cdp_input import BUTTON_BITS, held_after, key_event, mouse_event
from server.host.live.screencast import TabScreencast, Viewer
from server.host.page.scripts import page_script

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Page

    from server.host.browser.engine import BrowserEngine, HistoryStep
    from server.host.live.steps import StepRecorder
    from server.host.metrics import FrameCounts
    from server.host.rtc.team_api import PeerIdentity

log = logging.getLogger(__name__)

# A Python string holds a well-formed pair as one code point: a surrogate left is alone.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_LET_GO = "this tab is in secure entry: only the person in control watches it until a new page"

# What one viewer may have waiting to be handled: messages, and their bytes (two of the
# largest a view may send, so a paste waits behind another but a stream of them is refused).
INBOX_MESSAGES = 256
INBOX_BYTES = 2 * MAX_VIEW_MESSAGE
# Keys the page would take as held until their ``keyUp``.
_MODIFIER_KEYS = frozenset({"Shift", "Control", "Alt", "Meta"})
_KEY_UP = {"action": "up", "modifiers": 0, "repeat": False}
# How long a closing view waits for the page to take its let-go.
LET_GO_WAIT_SECONDS = 1.0


def web_url(value: object) -> str | None:
    """Only http and https addresses leave the page in a message (a page's own script may
    make an element's ``href`` answer anything at all)."""
    if not isinstance(value, str) or not value or urlsplit(value).scheme not in ("http", "https"):
        return None
    return value


def page_text(value: object) -> str:
    """Text a page's script answered, as a message may carry it: a lone half of a
    surrogate pair (a string cut in the middle of an emoji by a page's ``slice``) becomes
    U+FFFD, as a browser shows it."""
    return _LONE_SURROGATE.sub("\ufffd", str(value))


# Where a press cut short is released: outside any page, so no control under it is pressed.
_OFF_THE_PAGE = (-10_000.0, -10_000.0)


class ViewSession:
    """The host's side of one viewer's channel."""

    def __init__(
        self,
        engine: BrowserEngine,
        peer: PeerIdentity,
        options: ViewOptions,
        channel: Any,
        screencast: TabScreencast,
        resized: Callable[[ViewSession], Awaitable[None]],
        frame_counts: FrameCounts,
        steps: StepRecorder | None = None,
        view_id: str | None = None,
    ) -> None:
        self._engine = engine
        # Names this view to the tab registry, which records the views a holder holds through.
        self.view_id = view_id or new_id()
        self._steps = steps
        self._watched_page: Page | None = None
        self._resized = resized
        self._peer = peer
        self.options = options
        self.channel = channel
        self._screencast = screencast
        self.viewer = Viewer(channel, frame_counts)
        self._told_holding = False  # what the viewer last heard in a ``held`` message
        self._held_buttons = 0  # the mouse buttons this viewer holds down on the page
        self._held_keys: dict[str, Key] = {}  # the modifier keys it holds down, by code
        self._letting_go: asyncio.Task[None] | None = None
        self._last_cursor: str | None = None
        self._menus: dict[int, dict[str, Any]] = {}
        self._menu_ids = 0
        self._inbox: asyncio.Queue[str] = asyncio.Queue(maxsize=INBOX_MESSAGES)
        self._inbox_bytes = 0
        self._worker: asyncio.Task[None] | None = None

    def follow(self, screencast: TabScreencast) -> None:
        """The tab has a new page: input and menus go to it from now on."""
        # The old page closed before this one came (a crash, a sleep): what this viewer held
        # there went with it, and the new page never saw it pressed.
        self._let_go()
        self._screencast = screencast
        self._menus = {}
        self._watch_loads()

    @property
    def peer(self) -> PeerIdentity:
        return self._peer

    @property
    def team_id(self) -> str:
        return self._peer.team_id

    @property
    def tab_id(self) -> str:
        return self.options.tab_id

    def start(self) -> None:
        self._worker = asyncio.get_running_loop().create_task(self._work())

    def on_message(self, raw: str | bytes) -> None:
        """Messages are handled in order, one at a time, in a task of this viewer's own."""
        if isinstance(raw, bytes):
            self.send(error_message(InvalidArgument("view messages are JSON text")))
            return
        try:
            check_view_message_size(raw)  # an oversize message is refused, never queued
        except InvalidArgument as exc:
            self.send(error_message(exc))
            return
        size = utf8_size(raw)
        if self._inbox.full() or self._inbox_bytes + size > INBOX_BYTES:
            self.send(error_message(Conflict("too many messages at once", code="rateLimited")))
            return
        self._inbox.put_nowait(raw)
        self._inbox_bytes += size

    async def _work(self) -> None:
        while True:
            raw = await self._inbox.get()
            self._inbox_bytes -= utf8_size(raw)
            try:
                await self._handle(raw)
            except CrewhostError as exc:
                self.send(error_message(exc))
            except PlaywrightError as exc:
                log.info("live-view step failed: %s", exc)
                self.send(ViewError(code="pageUnavailable", message="the page did not answer"))
            except Exception:
                # One message's failure is that message's: the viewer's next ones (a release
                # among them) are still handled.
                log.exception("live-view step failed unexpectedly")
                self.send(ViewError(code="internal", message="the host could not do that"))

    async def _handle(self, raw: str) -> None:
        message = decode_view_message(raw)
        tab = self._engine.get_tab(self.team_id, self.tab_id)
        if holds_secret(tab) and not secret_view_allowed(tab, self._peer.account_id):
            # The view closes as protection starts; anything still in flight is refused.
            raise Forbidden("this tab is in secure entry", code="tabHoldsSecret")
        if isinstance(message, Take):
            told = self._told_holding
            self._engine.take_control(
                self.team_id, self.tab_id, self._peer.account_id, self.view_id
            )
            if self._told_holding == told:  # the registry's change did not answer it already
                self._tell_holding()
            return
        if isinstance(message, Release):
            told = self._told_holding
            if self.holding:
                self._engine.release(self.team_id, self.tab_id, self._peer.account_id)
            if self._told_holding == told:
                self._tell_holding()
            if holds_secret(tab):
                # Only its holder watches a tab in secure entry: letting go ends the view.
                self.send(Closed(code="tabHoldsSecret", reason=_LET_GO))
                self.channel.close()
            return
        if isinstance(message, Pointer):
            await self._pointer(message)
            return
        if isinstance(message, Resize):
            self.options = dataclasses.replace(
                self.options, viewport=(message.width, message.height)
            )
            await self._resized(self)
            return
        if not self.holding:
            raise Conflict("take control of the tab first", code="notHolding")
        if isinstance(message, Key):
            if message.key in _MODIFIER_KEYS and message.action == "down":
                self._held_keys[message.code or message.key] = message
            elif message.action == "up":
                self._held_keys.pop(message.code or message.key, None)
            await self._cdp("Input.dispatchKeyEvent", key_event(message))
        elif isinstance(message, Text | Paste):
            await self._cdp("Input.insertText", {"text": message.text})
        elif isinstance(message, Copy):
            await self._clipboard(message.type)
        elif isinstance(message, MenuChoice):
            await self._menu_choice(message)

    @property
    def holding(self) -> bool:
        """Whether input from this viewer goes to the page: the tab registry says its
        member holds the tab through this view (it took or was given control)."""
        return self._engine.holds(self.team_id, self.tab_id, self._peer.account_id, self.view_id)

    def holding_may_have_changed(self) -> None:
        """Who holds the tab may have changed without this viewer's asking (a granted
        request, a release from the member's other view, the tab closing): the viewer hears
        it as it hears its own take or release, and only when it changed."""
        if self.holding != self._told_holding:
            self._tell_holding()

    def _tell_holding(self) -> None:
        holding = self.holding
        self._told_holding = holding
        self._let_go()
        self._watch_loads()
        self.send(Held(by_you=holding))

    def _let_go(self) -> None:
        """The buttons and modifier keys this viewer holds down come up on the page, at the
        point its last mouse event went: a drag or a Shift that lost its holder would
        otherwise stay down for the agent (or the next person) who uses the page."""
        events = self._release_events()
        session = self._screencast.session
        if not events or session is None:
            return
        previous = self._letting_go
        self._letting_go = asyncio.get_running_loop().create_task(
            self._dispatch_release(session, events, previous)
        )

    def _release_events(self) -> list[tuple[str, dict[str, Any]]]:
        """The CDP events that let go of what this viewer holds; it holds nothing after. A
        press cut short is released off the page: it ends where it was (a drag stays
        where it got to) and presses nothing (released where it began, it would click)."""
        events: list[tuple[str, dict[str, Any]]] = []
        x, y = _OFF_THE_PAGE
        held = self._held_buttons
        for button, bit in BUTTON_BITS.items():
            if held & bit:
                held &= ~bit
                released = {"type": "mouseReleased", "x": x, "y": y, "button": button}
                events.append(("Input.dispatchMouseEvent", {**released, "buttons": held}))
        events += [
            ("Input.dispatchKeyEvent", key_event(key.model_copy(update=_KEY_UP)))
            for key in self._held_keys.values()
        ]
        self._held_buttons = 0
        self._held_keys = {}
        return events

    @staticmethod
    async def _dispatch_release(
        session: CDPSession,
        events: list[tuple[str, dict[str, Any]]],
        previous: asyncio.Task[None] | None,
    ) -> None:
        if previous is not None:
            await asyncio.wait({previous})  # in order, whatever became of it
        try:
            for method, params in events:
                await session.send(method, params)
        except PlaywrightError as exc:  # the page or its session is gone: nothing is held
            log.info("live view could not let go on the page: %s", exc)

    async def _let_go_done(self) -> None:
        """Input waits for a let-go on its way, so a new press never comes before it."""
        letting_go = self._letting_go
        if letting_go is not None:
            # Waited for, not awaited: a cancelled worker leaves the let-go to finish.
            await asyncio.wait({letting_go})
            if self._letting_go is letting_go:
                self._letting_go = None

    def _point(self, x: float, y: float) -> tuple[float, float]:
        if not self._screencast.width:
            raise Conflict("no frame has arrived yet", code="noFrameYet")
        return x * self._screencast.width, y * self._screencast.height

    async def _pointer(self, message: Pointer) -> None:
        x, y = self._point(message.x, message.y)
        if self.options.cursor and message.action == "move":
            await self._report_cursor(x, y)
        if not self.holding:
            if message.action == "move":
                return  # a watcher's pointer only asks for the cursor
            raise Conflict("take control of the tab first", code="notHolding")
        if message.action == "wheel":
            params: dict[str, Any] = {
                "type": "mouseWheel",
                "x": x,
                "y": y,
                "deltaX": message.delta_x,
                "deltaY": message.delta_y,
                "modifiers": message.modifiers,
            }
        else:
            self._held_buttons = held_after(message, self._held_buttons)
            params = mouse_event(message, x, y, self._held_buttons)
            if message.action == "down" and message.button == "left":
                self._pressed(x, y)
        await self._cdp("Input.dispatchMouseEvent", params)
        if self.options.menu and message.action == "down" and message.button == "right":
            await self._context_menu(x, y)

    def _pressed(self, x: float, y: float) -> None:
        """A step is read beside the press, which goes to the page without waiting for it."""
        if self._steps is None:
            return
        with contextlib.suppress(CrewhostError):  # the tab closed
            tab = self._engine.get_tab(self.team_id, self.tab_id)
            self._steps.pressed(tab, self._peer.account_id, self._screencast.page, x, y)

    def _watch_loads(self) -> None:
        """Page loads are steps while this viewer holds the tab, and only then."""
        page = self._screencast.page if self.holding and self._steps is not None else None
        if page is self._watched_page:
            return
        if self._watched_page is not None:
            self._watched_page.remove_listener("load", self._loaded)
            if page is None and self._steps is not None:
                self._steps.let_go(self.team_id, self.tab_id, self._peer.account_id)
        self._watched_page = page
        if page is not None:
            page.on("load", self._loaded)

    def _loaded(self, page: Page) -> None:
        if self._steps is None or not self.holding:
            return
        with contextlib.suppress(CrewhostError):
            tab = self._engine.get_tab(self.team_id, self.tab_id)
            self._steps.loaded(tab, self._peer.account_id, page)

    async def _report_cursor(self, x: float, y: float) -> None:
        under = await self._screencast.page.evaluate(page_script("under-point"), [x, y])
        cursor = str(under.get("cursor") or "auto")
        if cursor != self._last_cursor:
            self._last_cursor = cursor
            self.send(Cursor(cursor=cursor))

    async def _context_menu(self, x: float, y: float) -> None:
        under = await self._screencast.page.evaluate(page_script("under-point"), [x, y])
        link, image = web_url(under.get("link")), web_url(under.get("image"))
        selection = str(under.get("selection") or "")
        items: list[MenuItem] = []
        if link:
            items += ["open-link", "copy-link"]
        if selection:
            items.append("copy")
        if under.get("editable"):
            items += ["paste", "select-all"]
        items += ["back", "forward", "reload"]
        self._menu_ids += 1
        menu = {"link": link, "image": image}
        self._menus = {self._menu_ids: menu}  # only the newest menu can be chosen from
        self.send(
            ContextMenu(
                menu_id=self._menu_ids,
                x=x / self._screencast.width,
                y=y / self._screencast.height,
                link=link,
                image=image,
                selection=bool(selection),
                editable=bool(under.get("editable")),
                items=items,
            )
        )

    async def _menu_choice(self, choice: MenuChoice) -> None:
        menu = self._menus.pop(choice.menu_id, None)
        if menu is None:
            raise InvalidArgument("that menu is gone", code="menuGone")
        if choice.item == "open-link" and menu["link"]:
            tab = await self._engine.open_tab_beside(self.team_id, self.tab_id, menu["link"])
            self.send(Opened(tab_id=tab.id))
        elif choice.item == "copy-link" and menu["link"]:
            self.send(Copied(text=menu["link"]))
        elif choice.item == "copy":
            await self._clipboard("copy")
        elif choice.item == "paste":
            await self._cdp("Input.insertText", {"text": choice.text})
        elif choice.item == "select-all":
            await self._clipboard("select-all")
        elif choice.item == "back":
            await self._step_history("back")
        elif choice.item == "forward":
            await self._step_history("forward")
        elif choice.item == "reload":
            await self._step_history("reload")
        else:
            raise InvalidArgument("that item was not on the menu", code="menuItemInvalid")

    async def _step_history(self, step: HistoryStep) -> None:
        """The same step as the member's toolbar, in the tab's queue."""
        caller = Caller.person(self._peer.account_id)
        await self._engine.step_history(self.team_id, self.tab_id, caller, step)

    async def _clipboard(self, action: str) -> None:
        page = self._screencast.page
        if action == "select-all":
            await page.evaluate(page_script("select-all"))
            return
        if holds_secret(self._engine.get_tab(self.team_id, self.tab_id)):
            # Its fields may hold a secret shown as dots: nothing leaves it by the clipboard.
            raise Forbidden("copying from a tab in secure entry is refused", code="tabHoldsSecret")
        text = page_text(await page.evaluate(page_script("selection-text")))
        size = len(text.encode())
        if size > MAX_CLIPBOARD:
            self.send(CopyTooLarge(size=size, limit=MAX_CLIPBOARD))
            return
        self.send(Copied(text=text))
        if action == "cut" and text:
            await page.evaluate(page_script("delete-selection"))

    async def _cdp(self, method: str, params: dict[str, Any]) -> None:
        session = self._screencast.session
        if session is None:
            raise Conflict("the view is not running", code="viewStopped")
        given = method.startswith("Input.")
        if given:
            await self._let_go_done()
            self._screencast.input_given()
        await session.send(method, params)
        if given:
            self._screencast.input_delivered()

    def send(self, message: WireModel) -> None:
        if self.channel.readyState == "open":
            self.channel.send(message.model_dump_json())

    async def close(self) -> None:
        self.viewer.closed()
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        if self.holding:  # whatever became of the worker, a closed view holds nothing
            with contextlib.suppress(CrewhostError):
                self._engine.release(self.team_id, self.tab_id, self._peer.account_id)
        self._let_go()
        if self._letting_go is not None:
            # Before the screencast's session may end; but a page a dialog holds answers no
            # input until the dialog goes, and the close does not wait for that.
            await asyncio.wait({self._letting_go}, timeout=LET_GO_WAIT_SECONDS)
        self._watch_loads()
