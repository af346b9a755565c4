"""Hubs starting together on one empty PostgreSQL database: exactly one prints a setup link,
and it is the one that works."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import aiohttp

from tests.support import commands
from tests.support.commands import CREWHOST, PIPE, Forked
from tests.support.databases import scratch_postgres_database
from tests.support.hub_server import PASSWORD

# A link with a code in it (the other hub's words name the page, not a code).
LINK = re.compile(r"/app/setup#code=([A-Za-z0-9_-]+)")


async def start_hub(folder: Path, database_url: str) -> Forked:
    return await commands.start(
        CREWHOST,
        "hub",
        "--port",
        "0",
        "--log-format",
        "json",
        "--data-dir",
        str(folder),
        env={**os.environ, "CREWHOST_DATABASE_URL": database_url},
        stdout=PIPE,
        stderr=PIPE,
    )


async def what_it_says(process: Forked) -> tuple[str, str]:
    """The hub's address, and the stdout paragraph it prints about the first owner."""
    assert process.stderr is not None
    assert process.stdout is not None
    while True:
        line = json.loads(await asyncio.wait_for(process.stderr.readline(), 60))
        if line["message"] == "hub listening":
            break
    said = ""
    while "setup#code=" not in said:
        said += (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    return str(line["url"]), said


async def test_hubs_starting_together_print_one_link_and_it_works(tmp_path: Path) -> None:
    async with scratch_postgres_database() as url:
        processes = [await start_hub(tmp_path / name, url) for name in ("a", "b")]
        try:
            said = await asyncio.gather(*(what_it_says(p) for p in processes))
            codes = [m.group(1) for _, text in said if (m := LINK.search(text))]
            assert len(codes) == 1, said
            others = [text for _, text in said if not LINK.search(text)]
            assert "crewhost admin setup-code" in others[0]

            code = codes[0]
            hub_url = said[1][0]  # the code is the database's: any hub takes it
            async with (
                aiohttp.ClientSession() as session,
                session.post(
                    f"{hub_url}/v1/accounts",
                    json={
                        "email": "first@example.com",
                        "name": "First",
                        "password": PASSWORD,
                        "setupCode": code,
                        "teamName": "Team",
                    },
                    headers={"X-Crewhost-CSRF": "1"},
                ) as reply,
            ):
                assert reply.status == 201, await reply.text()
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                await asyncio.wait_for(process.wait(), 30)
