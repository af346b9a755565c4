"""Capability names a host lists in ``capabilities`` besides its route tables' own.

A route table names its capability itself (``browser-control-v1``, ``agents-v1``, …).
The live view is a ``view:`` channel, not a route table, so its features are named
here, and a client shows (and a peer opens) only what the host lists.
"""

from __future__ import annotations

# Watching a tab over a ``view:`` channel, and taking control of it (pointer, wheel, keys).
BROWSER_VIEW = "browser-view"
# The page's mouse cursor sent to a viewer that asks (``cursor=1``).
BROWSER_VIEW_CURSOR = "browser-view-cursor"
# Copy, cut, paste and select-all between the viewer's clipboard and the page.
BROWSER_VIEW_CLIPBOARD = "browser-view-clipboard"
# The host's own context menu for a right click (``menu=1``).
BROWSER_VIEW_CONTEXT_MENU = "browser-view-context-menu"
# The page held at the viewer's panel size (``viewport=WxH`` and ``viewport`` messages).
BROWSER_VIEW_VIEWPORT = "browser-view-viewport"
# A view that opens holding control (``take=1``): the only view a tab in secure entry
# admits, for the person who takes it over once no secret shows.
BROWSER_VIEW_TAKE = "browser-view-take"

LIVE_VIEW_CAPABILITIES: tuple[str, ...] = (
    BROWSER_VIEW,
    BROWSER_VIEW_CURSOR,
    BROWSER_VIEW_CLIPBOARD,
    BROWSER_VIEW_CONTEXT_MENU,
    BROWSER_VIEW_VIEWPORT,
    BROWSER_VIEW_TAKE,
)

# Chat attachments, each kept as a file (bytes copied and hashed), typed by its extension:
# MP3 and MOV with no preview; ZIP, never extracted; MP4 (apart, as a host with only
# media-attachments refuses it); SVG with an image preview only as a data: URL; and any
# other file as application/octet-stream.
MEDIA_ATTACHMENTS = "media-attachments"
ZIP_ATTACHMENTS = "zip-attachments"
MP4_ATTACHMENTS = "mp4-attachments"
SVG_ATTACHMENTS = "svg-attachments"
ANY_FILE_ATTACHMENTS = "any-file-attachments"

ATTACHMENT_CAPABILITIES: tuple[str, ...] = (
    MEDIA_ATTACHMENTS,
    ZIP_ATTACHMENTS,
    MP4_ATTACHMENTS,
    SVG_ATTACHMENTS,
    ANY_FILE_ATTACHMENTS,
)
