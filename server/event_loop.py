"""Which event loop serves: uvloop's when it is installed, or the standard library's.

uvloop runs the same asyncio code with its I/O and callbacks in C (libuv), so a
busy hub spends less of each request in the loop itself.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from server.common.errors import InvalidArgument

T = TypeVar("T")
LoopChoice = Literal["auto", "uvloop", "asyncio"]


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def loop_name(choice: LoopChoice) -> Literal["uvloop", "asyncio"]:
    """The loop a choice means here: ``auto`` is uvloop when it is installed."""
    if choice == "auto":
        return "uvloop" if uvloop_installed() else "asyncio"
    if choice == "uvloop" and not uvloop_installed():
        raise InvalidArgument(
            "the uvloop event loop is not installed: install uvloop, or use --loop asyncio",
            field="event_loop",
        )
    return choice


def _loop_factory(name: Literal["uvloop", "asyncio"]) -> Callable[[], asyncio.AbstractEventLoop]:
    if name == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def run(main: Coroutine[Any, Any, T], choice: LoopChoice) -> T:
    """``asyncio.run`` on the chosen loop."""
    try:
        factory = _loop_factory(loop_name(choice))
    except InvalidArgument:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
