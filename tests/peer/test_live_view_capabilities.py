"""The peer library opens no view a host does not list in ``capabilities``.

Every host built here serves the whole live view, so the host lacking a feature is a
stand-in channel that answers ``capabilities`` in the host's wire format.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import pytest
from aiortc import RTCPeerConnection

from peer.connection import HostConnection, NotServed
from peer.live_view import open_view
from server.common.protocol.capabilities import BROWSER_VIEW, LIVE_VIEW_CAPABILITIES

TAB_ID = "0f8fad5b-d9cb-469f-a165-70867728950e"


class HostStandIn:
    """The team-api channel of a host that serves ``capabilities`` and nothing of a view."""

    def __init__(self, capabilities: list[str]) -> None:
        self.capabilities = capabilities
        self.handlers: dict[str, Callable[..., None]] = {}
        self.view_channels: list[str] = []

    # What HostConnection uses of an RTCDataChannel and an RTCPeerConnection.
    def on(self, name: str, handler: Callable[..., None] | None = None) -> Any:
        if handler is None:
            return lambda f: f
        self.handlers[name] = handler
        return handler

    def send(self, raw: str) -> None:
        request = json.loads(raw)
        assert request["route"] == "capabilities"
        answer = {"protocol": 1, "hostId": "h", "capabilities": self.capabilities}
        self.handlers["message"](json.dumps({"id": request["id"], "result": answer}))

    def createDataChannel(self, label: str, ordered: bool = True) -> Any:
        self.view_channels.append(label)
        raise AssertionError("no view channel is opened on a host that does not serve it")


def connection_to(capabilities: list[str]) -> tuple[HostConnection, HostStandIn]:
    host = HostStandIn(capabilities)
    return HostConnection(cast(RTCPeerConnection, host), host, "h"), host


async def test_a_host_without_browser_view_is_refused_a_view() -> None:
    connection, host = connection_to(["host-v1", "browser-control-v1"])
    with pytest.raises(NotServed) as refused:
        await open_view(connection, TAB_ID)
    assert (refused.value.code, refused.value.capability) == ("notServed", BROWSER_VIEW)
    assert host.view_channels == []


@pytest.mark.parametrize(
    ("option", "capability"),
    [
        ({"cursor": True}, "browser-view-cursor"),
        ({"menu": True}, "browser-view-context-menu"),
        ({"viewport": (640, 480)}, "browser-view-viewport"),
        ({"take": True}, "browser-view-take"),
    ],
)
async def test_an_option_the_host_does_not_serve_is_refused(
    option: dict[str, Any], capability: str
) -> None:
    served = [c for c in LIVE_VIEW_CAPABILITIES if c != capability]
    connection, host = connection_to(["host-v1", *served])
    with pytest.raises(NotServed) as refused:
        await open_view(connection, TAB_ID, **option)
    assert refused.value.capability == capability
    assert host.view_channels == []
