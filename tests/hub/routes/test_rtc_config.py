"""The ICE servers a peer's RTCPeerConnection starts with."""

from __future__ import annotations

from pathlib import Path

from tests.support.databases import ScratchDatabase
from tests.support.hub_server import hub_settings, running_hub

TURN = {"urls": ["turn:turn.example.com:3478"], "username": "crew", "credential": "s3cret"}


async def test_signed_in_accounts_get_the_configured_ice_servers(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    settings = hub_settings(
        tmp_path, database, **{"rtc.ice_servers": [{"urls": ["stun:stun.example.com"]}, TURN]}
    )
    async with running_hub(settings, database) as server:
        anonymous = await server.client().get("/v1/rtc")
        assert (anonymous.status, anonymous.code) == (401, "unauthenticated")
        owner = await server.sign_up_owner()
        reply = await owner.get("/v1/rtc")
        assert reply.status == 200
        assert reply.body == {
            "iceServers": [
                {"urls": ["stun:stun.example.com"], "username": None, "credential": None},
                TURN,
            ]
        }
