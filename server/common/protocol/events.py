"""The events a host pushes on the ``team-api`` channel: one model each, with its name.

An event goes out as ``{"event": <NAME>, "data": <the model>}``. Every event is
listed in ``HOST_EVENTS``, so it appears in the host-protocol document and the
web client's generated types (``HostEventMessage``, a union keyed by ``event``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, create_model

from server.common.protocol.team_api import TeamApiEvent
from server.common.wire import WireModel


class HostEvent(WireModel):
    """Base of every event; ``NAME`` is what the ``event`` field carries."""

    NAME: ClassVar[str]

    def message(self) -> TeamApiEvent:
        return TeamApiEvent(event=self.NAME, data=self.model_dump(mode="json"))


class BrowserTabsChanged(HostEvent):
    """The team's tab list changed (a tab opened, closed, moved, was taken or released)."""

    NAME: ClassVar[str] = "browser-tabs-changed"


class BrowserProfilesChanged(HostEvent):
    """The team's browser profiles, or an agent's choice of one, changed."""

    NAME: ClassVar[str] = "browser-profiles-changed"


class AgentsChanged(HostEvent):
    """The team's agents changed (one was created, updated, duplicated or deleted)."""

    NAME: ClassVar[str] = "agents-changed"


class BrowserTakeoverRequested(HostEvent):
    """An agent asks a person to take a tab over (a captcha, a sign-in)."""

    NAME: ClassVar[str] = "browser-takeover-requested"
    tab_id: str
    agent_id: str | None
    thread_id: str | None
    reason: str


class Revoked(HostEvent):
    """This connection ends now: access changed (sent just before the host closes it)."""

    NAME: ClassVar[str] = "revoked"
    reason: str


HOST_EVENTS: tuple[type[HostEvent], ...] = (
    AgentsChanged,
    BrowserTabsChanged,
    BrowserProfilesChanged,
    BrowserTakeoverRequested,
    Revoked,
)


def event_envelope(event: type[HostEvent]) -> type[WireModel]:
    """The message model of one event, ``{event: <its NAME>, data: <it>}``, for schemas."""
    fields: dict[str, Any] = {
        "event": (Literal[event.NAME], Field()),
        "data": (event, Field()),
    }
    return create_model(f"{event.__name__}Event", __base__=WireModel, **fields)
