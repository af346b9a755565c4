"""``crewhost-peer usage`` as a real process: the team's use as a table and as CSV, a
model without a price shown as such."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from server.host.agents.usage import RequestFor
from server.host.agents.usage_prices import Tokens
from tests.peer.test_cli import login, peer_cli
from tests.support.hub_server import RunningHub
from tests.support.peers import wait_linked

pytestmark = pytest.mark.sqlite_only


async def test_prints_the_teams_use_by_model_as_a_table_and_as_csv(
    server: RunningHub, tmp_path: Path
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    account_id = str((await owner.get("/v1/me")).body["id"])
    await login(tmp_path, server)
    await wait_linked(server)
    usage = server.builtin.services.usage
    for provider, model, tokens in (
        ("anthropic", "claude-sonnet-4-5", Tokens(input=1000, output=200, cache_read=400)),
        ("custom-gateway", "=house", Tokens(input=50, output=5)),
    ):
        who = RequestFor(team_id, "a" * 32, None, None, account_id, "", provider, model)
        await usage.record(who, tokens, 0.5, ok=True)

    code, out, err = await peer_cli(tmp_path, "usage", "--by", "model")
    assert code == 0, err
    _range, header, *rows = out.splitlines()
    assert header.split()[:4] == ["MODEL", "REQUESTS", "INPUT", "OUTPUT"]
    by_model = {row.split()[0]: row for row in rows}
    assert by_model["=house"].endswith("no price")
    assert by_model["claude-sonnet-4-5"].split()[1:6] == ["1", "1000", "200", "400", "0"]
    assert by_model["claude-sonnet-4-5"].endswith(" USD")

    code, out, err = await peer_cli(tmp_path, "usage", "--by", "model", "--csv")
    assert code == 0, err
    lines = list(csv.reader(io.StringIO(out)))
    assert lines[0][:2] == ["model", "requests"]
    assert sorted(line[0] for line in lines[1:]) == ["'=house", "claude-sonnet-4-5"]
