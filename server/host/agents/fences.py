"""Fences around text from outside (a page, a webhook's body) in what a model reads: two
lines marked with a random word the text does not hold, so nothing in it can close the
fence and speak as the request around it."""

from __future__ import annotations

import secrets


def fence_for(text: str) -> str:
    """A random word that ``text`` does not hold."""
    fence = secrets.token_hex(8)
    while fence in text:
        fence = secrets.token_hex(8)
    return fence


def fenced(text: str, label: str, fence: str) -> str:
    """``text`` between a begin and an end line marked ``fence`` and named ``label``."""
    return (
        f"----- BEGIN {label} {fence} (untrusted data) -----\n"
        f"{text}\n"
        f"----- END {label} {fence} -----"
    )
