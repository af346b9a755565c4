"""A member's own hands on the team's tabs from Python: ``browser-control-v1`` as methods.

Each method is one route of the host and answers its result as the host sends it (camelCase
keys); a refusal raises ``TeamApiCallError`` with the host's code, and a host that does not
serve browser control raises ``NotServed`` at the first call.

Requests for control: ``request_control`` asks the person holding a tab to pass it on (the
holder hears ``browser-control-requested``); the holder answers with ``grant_control`` or
``dismiss_control_request``; the asker may ``withdraw_control_request``. Every end of a
request is announced to both as ``browser-control-request-resolved``.
"""

from __future__ import annotations

from typing import Any

from peer.connection import HostConnection

CAPABILITY = "browser-control-v1"


class BrowserControl:
    """``browser-control-v1`` over one host connection."""

    def __init__(self, connection: HostConnection) -> None:
        self._connection = connection

    async def _call(self, route: str, args: dict[str, Any] | None = None) -> Any:
        await self._connection.require(CAPABILITY)
        return await self._connection.call(f"{CAPABILITY}/{route}", args or {})

    async def list_tabs(self) -> list[dict[str, Any]]:
        """The team's tabs this member sees (title, address, profile, holder)."""
        answer = await self._call("list_tabs")
        return list(answer["tabs"])

    async def new_tab(
        self, url: str = "about:blank", *, profile_id: str | None = None, private: bool = False
    ) -> dict[str, Any]:
        """Open a tab at a typed address: in Shared, a named profile, or a private sign-in
        (seen by this member only)."""
        args: dict[str, Any] = {"url": url, "private": private}
        if profile_id is not None:
            args["profileId"] = profile_id
        return dict(await self._call("new_tab", args))

    async def navigate(self, tab_id: str, url: str) -> dict[str, Any]:
        return dict(await self._call("navigate", {"tabId": tab_id, "url": url}))

    async def close_tab(self, tab_id: str) -> None:
        await self._call("close_tab", {"tabId": tab_id})

    async def request_control(self, tab_id: str) -> dict[str, Any]:
        """Ask the person in control of ``tab_id`` for it; answers the request (its ``id``,
        ``holder`` and ``expiresIn`` seconds)."""
        return dict(await self._call("request_control", {"tabId": tab_id}))

    async def grant_control(self, request_id: str) -> dict[str, Any]:
        """As the holder: pass the tab to the member who asked (who must be watching it)."""
        return dict(await self._call("grant_control", {"requestId": request_id}))

    async def dismiss_control_request(self, request_id: str) -> dict[str, Any]:
        """As the holder: turn the request down."""
        return dict(await self._call("dismiss_control_request", {"requestId": request_id}))

    async def withdraw_control_request(self, request_id: str) -> dict[str, Any]:
        """As the asker: take the request back."""
        return dict(await self._call("withdraw_control_request", {"requestId": request_id}))
