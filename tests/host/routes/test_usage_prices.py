"""``usage-v1/prices-*`` over real peers, on both databases: an admin's own price for a
model is kept and listed; a price from a moment that is no moment is refused, naming the
field, and nothing is kept."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from peer.connection import HostConnection
from tests.host.routes.conftest import Team, refused

PRICE = {
    "providerId": "openai",
    "model": "gpt-house",
    "input": "1.25",
    "output": "10",
    "cacheRead": "0.125",
    "cacheWrite": "0",
}
_RAW_IDS = itertools.count(9_000_001)


async def raw_call(connection: HostConnection, route: str, args_text: str) -> dict[str, Any]:
    """A request whose arguments are JSON text as given (``NaN``, ``Infinity``: what the
    peer's own encoder never sends), and the host's answer to it."""
    request_id = next(_RAW_IDS)
    answered: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    def on_message(raw: str | bytes) -> None:
        message = json.loads(raw)
        if message.get("id") == request_id and not answered.done():
            answered.set_result(message)

    connection._channel.on("message", on_message)
    try:
        connection.send_raw(f'{{"id": {request_id}, "route": "{route}", "args": {args_text}}}')
        return await asyncio.wait_for(answered, 15)
    finally:
        connection._channel.remove_listener("message", on_message)


async def test_a_price_from_no_moment_is_refused_and_a_good_one_kept(team: Team) -> None:
    before = await team.admin.call("usage-v1/prices-list")
    for moment in ("NaN", "Infinity", "-1"):
        args = json.dumps(PRICE)[:-1] + f', "validFrom": {moment}}}'
        answer = await raw_call(team.admin, "usage-v1/prices-set", args)
        assert answer["error"]["code"] == "invalidArgument", answer
        assert "validFrom" in json.dumps(answer["error"])
    assert await team.admin.call("usage-v1/prices-list") == before
    assert await refused(team.member, "usage-v1/prices-set", PRICE) == "forbidden"

    kept = await team.admin.call("usage-v1/prices-set", {**PRICE, "validFrom": 1.7e9})
    assert (kept["model"], kept["validFrom"], kept["input"]) == ("gpt-house", 1.7e9, "1.25")
    listed = (await team.member.call("usage-v1/prices-list"))["prices"]
    assert kept["id"] in [p["id"] for p in listed]
