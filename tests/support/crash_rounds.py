"""Rounds of ``crewhost serve`` killed with SIGKILL under a write load, and what survived.

Each round starts the server on one data folder, runs a few writers through the real
HTTP API (a sign-up through an invitation: an account, a membership and an invitation
use in one transaction; then a team made by that account: a team and its owner
membership), kills the server at a random moment (seeded), and checks the database
file with the server down: its integrity check, every acknowledged write, no partial
rows. Shared by ``tests/ops/test_crash_safety.py`` and ``bench/crash_safety.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tests.support.serving import serving

PASSWORD = "correct horse battery"
OWNER = "owner@example.com"
WRITERS = 3
INVITATION_USES = 1000
CSRF = {"X-Crewhost-CSRF": "1"}


@dataclass
class Tally:
    """What the rounds so far were told was written, and what a check found missing."""

    rounds: int = 0
    accounts: set[str] = field(default_factory=set)
    teams: set[str] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    invitation: str | None = None
    invitation_uses: int = 0

    @property
    def acknowledged(self) -> int:
        return len(self.accounts) + len(self.teams)


class _Round:
    def __init__(self, url: str, tally: Tally, number: int) -> None:
        self.url = url
        self.tally = tally
        self.number = number
        self.headers = {**CSRF, "Origin": url}

    def session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))

    async def owner_signs_in(self, session: aiohttp.ClientSession, setup_code: str | None) -> str:
        """The owner's session (signed up on the first round); the owner's first team id."""
        if setup_code is not None:
            body = {"email": OWNER, "name": "Owner", "password": PASSWORD}
            body |= {"setupCode": setup_code, "teamName": "Team A"}
            path = "/v1/accounts"
        else:
            body = {"email": OWNER, "password": PASSWORD, "client": "browser"}
            path = "/v1/sessions"
        async with session.post(self.url + path, json=body, headers=self.headers) as reply:
            assert reply.status == 201, await reply.text()
        async with session.get(f"{self.url}/v1/teams") as reply:
            return str(min((await reply.json())["teams"], key=lambda t: t["createdAt"])["id"])

    async def invitation(self, session: aiohttp.ClientSession, team_id: str) -> str:
        tally = self.tally
        if tally.invitation is None or tally.invitation_uses > INVITATION_USES - 100:
            async with session.post(
                f"{self.url}/v1/teams/{team_id}/invitations",
                json={"maxUses": INVITATION_USES},
                headers=self.headers,
            ) as reply:
                assert reply.status == 201, await reply.text()
                tally.invitation, tally.invitation_uses = (await reply.json())["code"], 0
        return tally.invitation

    async def writer(self, code: str, writer: int) -> None:
        """Sign-ups and teams, one after another, until the server goes away."""
        serial = 0
        with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError):
            while True:
                serial += 1
                email = f"r{self.number}w{writer}n{serial}@example.com"
                async with self.session() as session:
                    async with session.post(
                        f"{self.url}/v1/accounts",
                        json={"email": email, "name": f"P{serial}", "password": PASSWORD}
                        | {"invitationCode": code},
                        headers=self.headers,
                    ) as reply:
                        assert reply.status == 201, await reply.text()
                        self.tally.invitation_uses += 1
                        self.tally.accounts.add((await reply.json())["account"]["id"])
                    async with session.post(
                        f"{self.url}/v1/teams", json={"name": f"T {email}"}, headers=self.headers
                    ) as reply:
                        assert reply.status == 201, await reply.text()
                        self.tally.teams.add((await reply.json())["id"])


async def crash_round(data_dir: Path, tally: Tally, rng: random.Random) -> None:
    """One round: serve, write, SIGKILL at a random moment, then check the database."""
    number = tally.rounds
    async with serving(data_dir, expect_setup=number == 0) as served:
        work = _Round(served.url, tally, number)
        async with work.session() as owner:
            team_id = await work.owner_signs_in(owner, served.setup_code)
            code = await work.invitation(owner, team_id)
        writers = [asyncio.create_task(work.writer(code, w)) for w in range(WRITERS)]
        try:
            await asyncio.sleep(rng.uniform(0.05, 0.8))  # the kill's moment, not a wait for state
            served.kill()
            await served.process.wait()
            await asyncio.gather(*writers)
        finally:
            for task in writers:
                task.cancel()
    tally.rounds += 1
    check_database(data_dir / "crewhost.db", tally)


def check_database(path: Path, tally: Tally) -> None:
    """Integrity, every acknowledged write, and no partial rows; adds what is wrong."""
    connection = sqlite3.connect(path)
    try:
        verdict = connection.execute("PRAGMA integrity_check").fetchall()
        if verdict != [("ok",)]:
            tally.problems.append(f"round {tally.rounds}: integrity_check said {verdict}")
        accounts = {row[0] for row in connection.execute("SELECT id FROM accounts")}
        teams = {row[0] for row in connection.execute("SELECT id FROM teams")}
        tally.lost = sorted((tally.accounts - accounts) | (tally.teams - teams))
        partial = {
            "an account without a membership": "SELECT count(*) FROM accounts a WHERE NOT "
            "EXISTS (SELECT 1 FROM memberships m WHERE m.account_id = a.id)",
            "a team without exactly one owner": "SELECT count(*) FROM teams t WHERE (SELECT "
            "count(*) FROM memberships m WHERE m.team_id = t.id AND m.role = 'owner') != 1",
            "a sign-up without its invitation use": "SELECT (SELECT count(*) FROM accounts) - 1 "
            "- (SELECT count(*) FROM invitation_uses)",
        }
        for what, query in partial.items():
            (count,) = connection.execute(query).fetchone()
            if count:
                tally.problems.append(f"round {tally.rounds}: {count} x {what}")
    finally:
        connection.close()
