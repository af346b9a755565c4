"""``crewhost-peer hooks`` as a real process: create (the secret printed once), list,
rotate and delete, each checked by a signed delivery to the URL it printed."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
from standardwebhooks.webhooks import Webhook

from server.common.tokens import new_id
from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub

ROUTINE = "8" * 32


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
    code, out, err = await peer_cli(
        tmp_path, "hooks", "create", ROUTINE, "--event-type", "push", "--equals", "ref=main"
    )
    assert code == 0, err
    made = printed(out)
    assert made["url"] == f"{server.url}/v1/hooks/{made['hook']}"
    assert made["secret"].startswith("whsec_")
    assert "shown this once" in out
    await until_status(made["url"], made["secret"], 202)

    code, out, err = await peer_cli(tmp_path, "hooks", "list", ROUTINE)
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
    code, _, err = await peer_cli(tmp_path, "hooks", "create", ROUTINE, "--equals", "novalue")
    assert (code, err) == (2, "crewhost-peer: --equals takes PATH=JSON, not 'novalue'\n")
