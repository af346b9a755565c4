"""Reading a page as the snapshot text: the accessibility tree with refs.

Each actionable node gets a ref ``<revision>:<frame>:<n>``. The tree walk runs
as one script per frame, in the tools' isolated world (a page's patched DOM cannot
change what it shows); each walk keeps a registry of its elements in ref order
there, out of the page's reach, so a ref resolves to the very element the snapshot
showed, inside an open shadow root or a same-origin frame alike. The tab's revision
moves on every snapshot; only the newest few registries are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Page

from server.common.errors import Conflict
from server.host.browser.per_tab import PerTab
from server.host.browser.protection import protection_of
from server.host.browser.tabs import Tab
from server.host.page.isolated import evaluate_isolated
from server.host.tools.context import ToolContext
from server.host.tools.page.challenge import detect_challenge
from server.host.tools.page.consent import watch_consent
from server.host.tools.page.settle import settle
from server.host.tools.page.site_memories import site_memories_for
from server.host.tools.page.tab_access import holds_secret
from server.host.tools.page.takeover_cases import takeover_for_snapshot
from server.host.tools.results import ToolFailure

MAIN_FRAME = "main"


# The tree gets this much of a result's 20,000 characters; the rest is for the other fields.
TREE_BUDGET = 16_000


# How many snapshot revisions keep their registries (an older ref of an unchanged page works).
KEPT_REVISIONS = 3


# Same-origin frames nested deeper than this are listed but not walked.
MAX_FRAME_DEPTH = 3


_CUT_NOTE = (
    "[the snapshot stops here: the page is longer than a snapshot may be; "
    "use get_tab_content, scroll, or a CSS target for the rest]"
)


_WITHHELD_SCHEMES = ("data:", "blob:")


@dataclass
class SnapshotState:
    """A tab's snapshot revision and the frame keys of its newest revisions (whose
    registries the page's isolated world keeps)."""

    revision: int = 0
    frames: dict[int, list[str]] = field(default_factory=dict)


_SNAPSHOT: PerTab[SnapshotState] = PerTab("snapshot", SnapshotState)


def snapshot_state(tab: Tab) -> SnapshotState:
    """The tab's snapshot state, created on first use; it goes with the tab."""
    return _SNAPSHOT.get_or_create(tab)


def shown_url(url: str) -> str:
    """The page address as a snapshot shows it: a ``data:``/``blob:`` address carries the
    whole document, so it is withheld."""
    if url.lower().startswith(_WITHHELD_SCHEMES):
        return url.split(":", 1)[0] + ": (address withheld)"
    return url


def shown_tab_url(tab: Tab) -> str:
    """A tab's address as an agent reads it: ``shown_url``, and withheld while the tab is
    protected and its address shows a value that went in (a site that redirected there)."""
    held = protection_of(tab)
    if held is not None and held.shows(tab.url):
        return "(address withheld: it shows a value that went in from the vault)"
    return shown_url(tab.url)


class _TreeWalk:
    """Walks a page's frames for one revision, sharing one character budget."""

    def __init__(self, page: Page, revision: int, *, hide_values: bool = False) -> None:
        self.page = page
        self.revision = revision
        self.hide_values = hide_values
        self.keys: list[str] = []
        self.budget = TREE_BUDGET
        self.cut = False
        self.title = ""

    async def walk(self, key: str, depth: int, owner: tuple[str, int] | None = None) -> list[str]:
        """The lines of the frame ``key``: the main frame's, or the one inside the frame
        element ``owner`` (its frame's key and its index in that frame's registry)."""
        found: dict[str, Any] | None = await evaluate_isolated(
            self.page,
            "snapshot",
            {
                "revision": self.revision,
                "frameKey": key,
                "budget": max(self.budget, 0),
                "baseDepth": depth,
                "owner": owner,
                # The world forgets the registries of revisions before the kept ones.
                "keepFrom": self.revision - KEPT_REVISIONS + 1,
                "hideValues": self.hide_values,
            },
        )
        if found is None:
            return []  # the frame's document is not this world's to read (any more)
        self.keys.append(key)
        if owner is None:
            self.title = str(found["title"])
        lines: list[str] = list(found["lines"])
        self.budget -= sum(len(line) + 1 for line in lines)
        self.cut = self.cut or bool(found["cut"])
        # Child frames are spliced in from the last, so earlier line numbers stay right.
        for child in reversed(found["frames"]):
            if child["depth"] > MAX_FRAME_DEPTH + depth or self.budget <= 0:
                continue
            child_lines = await self.walk(f"f{len(self.keys)}", child["depth"], (key, child["n"]))
            lines[child["line"] : child["line"]] = child_lines
        return lines


async def read_tree(tab: Tab, page: Page) -> tuple[int, str, bool, str]:
    """Walks the page for a new revision: ``(revision, tree, cut, title)``.

    Runs inside the tab's queue (from an operation given to ``engine.run``).
    """
    state = snapshot_state(tab)
    revision = state.revision + 1
    walk = _TreeWalk(page, revision, hide_values=holds_secret(tab))
    lines = await walk.walk(MAIN_FRAME, 0)
    state.revision = revision
    state.frames[revision] = walk.keys
    for old in sorted(state.frames)[:-KEPT_REVISIONS]:
        del state.frames[old]
    if walk.cut:
        lines.append(_CUT_NOTE)
    return revision, "\n".join(lines), walk.cut, walk.title


async def read_snapshot(
    context: ToolContext, tab: Tab, page: Page, *, challenge_wait: float | None = None
) -> dict[str, Any]:
    """A new snapshot of ``page``, for use inside an operation already in the tab's queue.

    ``challenge_wait`` bounds how much of the document's bot-check budget this read may
    spend (``navigate`` reads briefly and leaves the rest for the next snapshot).
    """
    watch_consent(context, tab)  # a popup or a woken tab gets the banner search too
    challenge = await detect_challenge(context, tab, page, wait_limit=challenge_wait)
    await settle(page, context.settings)
    revision, tree, cut, title = await read_tree(tab, page)
    url = shown_url(page.url)
    entered = protection_of(tab)
    if entered is not None and entered.shows("\n".join((tree, title or "", page.url))):
        # The page echoed a secret after the entry's own scan: it is a person's to look at.
        raise ToolFailure(
            "pageShowsSecret",
            "the page shows a value that went in from the vault; nothing of it is read: "
            "ask a person to take the tab over (request_takeover)",
        )
    result: dict[str, Any] = {
        "tabId": tab.id,
        "revision": revision,
        "url": url,
        "title": title,
        "tree": tree,
    }
    if challenge is not None:
        result["challenge"] = challenge
    takeover = await takeover_for_snapshot(context, tab, page, challenge)
    if takeover is not None:
        result["takeover"] = takeover
    memories = await site_memories_for(context, page.url, secret=holds_secret(tab))
    if memories:
        result["siteMemories"] = memories
    if cut:
        result["truncated"] = True
    return result


async def take_snapshot(
    context: ToolContext, tab: Tab, *, challenge_wait: float | None = None
) -> dict[str, Any]:
    """A new snapshot of the tab, taken in the tab's queue (never call it from inside one).

    With a page dialog open the page cannot be read: the result names the dialog.
    """
    try:
        done = await context.engine.run(
            context.team_id,
            tab.id,
            context.caller,
            lambda page: read_snapshot(context, tab, page, challenge_wait=challenge_wait),
        )
    except Conflict as exc:
        if exc.code != "dialogOpen" or tab.dialog is None:
            raise
        return {
            "tabId": tab.id,
            "url": shown_tab_url(tab),
            "dialog": tab.dialog.to_wire(),
            "next": exc.message,
        }
    result = dict(done.value or {})
    if done.stale_refs:
        result["note"] = (
            "the page was loaded again after its renderer stopped; older refs are stale"
        )
    return result


def ref_failure(message: str) -> ToolFailure:
    """The refusal for a ref the page no longer backs."""
    return ToolFailure("staleRef", f"{message}; take a new snapshot and use its refs")
