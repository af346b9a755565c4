"""A thread's title from its first message: its first words, cut on a word boundary."""

from __future__ import annotations

TITLE_CHARS = 60
ELLIPSIS = "…"


def title_from_message(text: str) -> str:
    """The message's first ``TITLE_CHARS`` characters on one line; cut at the last whole
    word with an ellipsis when it is longer (or mid-word when its first word is longer)."""
    words = " ".join(text.split())
    if len(words) <= TITLE_CHARS:
        return words
    head = words[: TITLE_CHARS + 1]
    cut = head.rfind(" ")
    kept = head[:cut] if cut > 0 else words[:TITLE_CHARS]
    return kept.rstrip(" ,.;:-") + ELLIPSIS
