"""The ICE servers a peer's RTCPeerConnection starts with, and TURN credentials per account."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from pathlib import Path

import pytest

from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import hub_settings, running_hub

STUN = {"urls": ["stun:stun.example.com"]}
TURN = {"urls": ["turn:turn.example.com:3478?transport=udp"]}
FIXED = {"urls": ["turns:relay.example.com:5349"], "username": "ops", "credential": "fixed"}
SECRET = "shared-with-coturn-0123456789"


async def test_signed_in_accounts_get_their_own_short_lived_turn_credential(
    tmp_path: Path, database: ScratchDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    clock = FakeClock(start=1_800_000_000)
    settings = hub_settings(
        tmp_path,
        database,
        **{
            "rtc.ice_servers": [STUN, TURN, FIXED],
            "rtc.turn_secret": SECRET,
            "rtc.turn_credential_seconds": 600,
        },
    )
    async with running_hub(settings, database, clock=clock, with_host=False) as server:
        anonymous = await server.client().get("/v1/rtc")
        assert (anonymous.status, anonymous.code) == (401, "unauthenticated")
        owner = await server.sign_up_owner()
        account_id = (await owner.get("/v1/me")).body["id"]
        reply = await owner.get("/v1/rtc")
        assert reply.status == 200
        stun, turn, fixed = reply.body["iceServers"]
        assert stun == {**STUN, "username": None, "credential": None}
        assert fixed == FIXED  # a server the operator gave a fixed user keeps it
        expires, _, who = turn["username"].partition(":")
        assert who == account_id
        assert 1_800_000_600 <= int(expires) <= 1_800_000_601
        expected = hmac.new(SECRET.encode(), turn["username"].encode(), hashlib.sha1).digest()
        assert turn["credential"] == base64.b64encode(expected).decode()
        # The secret itself is in no answer and no log line.
        assert SECRET not in json.dumps(reply.body)
        assert SECRET not in caplog.text
        assert "**" in repr(settings.rtc.turn_secret)


async def test_without_a_secret_servers_pass_as_configured(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    settings = hub_settings(tmp_path, database, **{"rtc.ice_servers": [STUN, TURN]})
    async with running_hub(settings, database, with_host=False) as server:
        owner = await server.sign_up_owner()
        reply = await owner.get("/v1/rtc")
        assert reply.body == {
            "iceServers": [
                {**STUN, "username": None, "credential": None},
                {**TURN, "username": None, "credential": None},
            ]
        }
