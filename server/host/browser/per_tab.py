"""Typed keys for what the tools keep about a tab (``Tab.tool_state``).

Each kind of state has one ``PerTab`` key, declared beside the code that uses it; the
state goes with the tab. A key is its own identity, so two modules never share state
by choosing the same name, and what a key gives back has the key's type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, cast

S = TypeVar("S")


class HasToolState(Protocol):
    """What a key needs of a tab (``tabs.Tab`` has it): the state the keys keep on it."""

    tool_state: dict[PerTab[Any], Any]


class PerTab(Generic[S]):
    """One kind of state kept per tab; ``make`` builds it on first use (``get_or_create``)."""

    __slots__ = ("_make", "name")

    def __init__(self, name: str, make: Callable[[], S] | None = None) -> None:
        self.name = name
        self._make = make

    def __repr__(self) -> str:
        return f"PerTab({self.name!r})"

    def get(self, tab: HasToolState) -> S | None:
        """The tab's state of this kind, or None before anything kept it."""
        return cast("S | None", tab.tool_state.get(self))

    def get_or_create(self, tab: HasToolState) -> S:
        """The tab's state of this kind, made (and kept) on first use."""
        if self in tab.tool_state:
            return cast("S", tab.tool_state[self])
        if self._make is None:
            raise TypeError(f"{self!r} has no default state to make")
        state = tab.tool_state[self] = self._make()
        return state

    def set(self, tab: HasToolState, state: S) -> None:
        """Keeps ``state`` as the tab's state of this kind, in place of any before it."""
        tab.tool_state[self] = state
