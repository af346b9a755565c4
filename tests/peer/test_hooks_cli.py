"""``crewhost-peer hooks`` as a real process: create (the secret printed once), list,
rotate and delete, each checked by a signed delivery to the URL it printed."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from standardwebhooks.webhooks import Webhook

from server.common.roles import Role
from server.common.tokens import new_id
from server.host.agents.routine_schedules import every_schedule
from server.host.agents.routines import RoutineSpec
from server.host.services.workspace import Member
from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub

pytestmark = pytest.mark.sqlite_only


async def a_routine(server: RunningHub) -> str:
    """A routine of a new agent of the owner's team, made on the built-in host."""
    owner = await server.sign_in("owner@example.com")
    team_id = await server.first_team_id(owner)
    assert owner.account_id is not None
    services = server.builtin.services
    agent = await services.agents.create_agent(
        team_id,
        name="Builder",
        instructions="",
        provider="anthropic",
        model=None,
        permissions={},
        max_tool_calls=None,
    )
    routine = await services.routines.create_routine(
        Member(team_id, owner.account_id, Role.OWNER),
        agent.id,
        RoutineSpec(
            name="Triage",
            message="Triage the failed build.",
            schedule=every_schedule(3600, time.time()),
            enabled=False,
        ),
    )
    return routine.id


def printed(out: str) -> dict[str, str]:
    """The ``name value`` lines of a create or rotate."""
    return {
        line.split()[0]: line.split()[1]
        for line in out.splitlines()
        if line.split() and line.split()[0] in ("hook", "url", "secret")
    }


async def send(url: str, secret: str) -> int:
    webhook_id, when, body = "msg_" + new_id(), datetime.now(tz=UTC), '{"type": "push"}'
    headers = {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": Webhook(secret).sign(webhook_id, when, body),
    }
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=body, headers=headers) as r,
    ):
        return r.status


async def until_status(url: str, secret: str, wanted: int) -> None:
    """The hub learns of a change over the host's link, a moment after the command ends."""
    async with asyncio.timeout(20):
        while await send(url, secret) != wanted:  # noqa: ASYNC110 - no event to wait on
            await asyncio.sleep(0.05)


async def test_create_rotate_list_and_delete(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    routine = await a_routine(server)
    code, out, err = await peer_cli(
        tmp_path, "hooks", "create", routine, "--event-type", "push", "--equals", "ref=main"
    )
    assert code == 0, err
    made = printed(out)
    assert made["url"] == f"{server.url}/v1/hooks/{made['hook']}"
    assert made["secret"].startswith("whsec_")
    assert "shown this once" in out
    await until_status(made["url"], made["secret"], 202)

    code, out, err = await peer_cli(tmp_path, "hooks", "list", routine)
    assert code == 0, err
    assert made["hook"] in out
    assert "push" in out
    assert made["secret"] not in out

    code, out, err = await peer_cli(tmp_path, "hooks", "rotate", made["hook"])
    assert code == 0, err
    rotated = printed(out)
    assert rotated["secret"] != made["secret"]
    await until_status(made["url"], rotated["secret"], 202)
    assert await send(made["url"], made["secret"]) == 202  # the old one, for a day

    code, out, err = await peer_cli(tmp_path, "hooks", "delete", made["hook"])
    assert (code, out) == (0, f"deleted {made['hook']}\n"), err
    await until_status(made["url"], rotated["secret"], 404)


async def test_refusals(server: RunningHub, tmp_path: Path) -> None:
    await server.sign_up_owner()
    await login(tmp_path, server)
    code, _, err = await peer_cli(tmp_path, "hooks", "rotate", new_id())
    assert (code, err) == (1, "crewhost-peer: no such webhook trigger (hookNotFound)\n")
    code, _, err = await peer_cli(tmp_path, "hooks", "create", "8" * 32, "--equals", "novalue")
    assert (code, err) == (2, "crewhost-peer: --equals takes PATH=JSON, not 'novalue'\n")
    code, _, err = await peer_cli(tmp_path, "hooks", "create", "8" * 32)
    assert (code, err) == (1, "crewhost-peer: no such routine (routineNotFound)\n")
