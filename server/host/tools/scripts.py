"""The page scripts the tools run, read once from ``js/``.

Each script is one function expression; ``/*COMMON*/`` inside it is replaced by
the shared helpers, so every script runs standalone in one ``evaluate`` call.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

_COMMON_MARK = "/*COMMON*/"


@cache
def page_script(name: str) -> str:
    """The function source of ``js/<name>.js``, with the shared helpers inlined."""
    folder = resources.files("server.host.tools").joinpath("js")
    source = folder.joinpath(f"{name}.js").read_text(encoding="utf-8")
    if _COMMON_MARK in source:
        common = folder.joinpath("common.js").read_text(encoding="utf-8")
        source = source.replace(_COMMON_MARK, common)
    return source
