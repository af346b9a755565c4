"""The hub's HTTP API as the peer library uses it (bearer tokens, no cookies)."""

from __future__ import annotations

from typing import Any

import aiohttp

from server.common.protocol.signaling import ConnectAnswer, RtcConfig, TicketGrant


class HubError(Exception):
    """The hub refused a request; ``code`` is its stable error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.status = status
        self.code = code
        self.message = message


class HubClient:
    """A signed-in (or not yet) client of one hub."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> HubClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = (
            {"Authorization": f"Bearer {self.token}"} if self.token else {"X-Crewhost-CSRF": "1"}
        )
        async with self._session.request(
            method, self.base_url + path, json=body, headers=headers
        ) as reply:
            try:
                data = await reply.json(content_type=None) if reply.content_length != 0 else None
            except ValueError as exc:
                # A page, not the API: a mistyped address, or a proxy's own answer.
                raise HubError(
                    reply.status,
                    "notAHub",
                    f"{self.base_url} did not answer as a Crewhost hub (HTTP {reply.status}, "
                    "not JSON): check the address given to `crewhost-peer login --hub`",
                ) from exc
            if reply.status >= 400:
                error = data.get("error", {}) if isinstance(data, dict) else {}
                raise HubError(
                    reply.status,
                    str(error.get("code", "httpError")),
                    str(error.get("message", reply.reason)),
                )
            return data

    async def sign_in(self, email: str, password: str) -> dict[str, Any]:
        """Sign in as a peer; keeps the bearer token and answers the account."""
        reply = await self.request(
            "POST", "/v1/sessions", {"email": email, "password": password, "client": "peer"}
        )
        self.token = str(reply["token"])
        return dict(reply["account"])

    async def sign_out(self) -> None:
        await self.request("DELETE", "/v1/sessions/current")
        self.token = None

    async def me(self) -> dict[str, Any]:
        return dict(await self.request("GET", "/v1/me"))

    async def teams(self) -> list[dict[str, Any]]:
        return list((await self.request("GET", "/v1/teams"))["teams"])

    async def hosts(self, team_id: str) -> list[dict[str, Any]]:
        return list((await self.request("GET", f"/v1/teams/{team_id}/hosts"))["hosts"])

    async def rtc_config(self) -> RtcConfig:
        """The STUN/TURN servers this hub tells peers to use."""
        return RtcConfig.model_validate(await self.request("GET", "/v1/rtc"))

    async def ticket(self, team_id: str, host_id: str, fingerprint: str) -> TicketGrant:
        reply = await self.request(
            "POST", f"/v1/teams/{team_id}/hosts/{host_id}/tickets", {"fingerprint": fingerprint}
        )
        return TicketGrant.model_validate(reply)

    async def connect(self, team_id: str, host_id: str, ticket: str, sdp: str) -> ConnectAnswer:
        reply = await self.request(
            "POST", f"/v1/teams/{team_id}/hosts/{host_id}/connect", {"ticket": ticket, "sdp": sdp}
        )
        return ConnectAnswer.model_validate(reply)
