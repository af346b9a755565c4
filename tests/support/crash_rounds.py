"""Rounds of ``crewhost serve`` killed with SIGKILL under a write load, and what survived.

Each round starts the server on one data folder, checks that every tab an earlier
round opened came back from the tab state file, opens a tab, then runs writers
through the real HTTP API (a sign-up through an invitation: an account, a membership
and an invitation use in one transaction; then a team made by that account: a team
and its owner membership) and one through the Team API from a real aiortc peer (the
owner creating agents), kills the server at a random moment (seeded), and checks the
database file with the server down: its integrity check, every acknowledged write, no
partial rows. Shared by ``tests/ops/test_crash_safety.py`` and ``bench/crash_safety.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from peer.connection import HostConnection, connect_to_host
from peer.hub_client import HubClient
from peer.known_hosts import KnownHosts
from server.host.browser.state import STATE_FILE
from tests.support.serving import serving

PASSWORD = "correct horse battery"
OWNER = "owner@example.com"
WRITERS = 3
INVITATION_USES = 1000
KEPT_AGENTS = 150
CSRF = {"X-Crewhost-CSRF": "1"}
# How long a new tab may take to reach its team's state file.
STATE_FILE_WAIT_SECONDS = 10.0


@dataclass
class Tally:
    """What the rounds so far were told was written, and what a check found missing."""

    rounds: int = 0
    accounts: set[str] = field(default_factory=set)
    teams: set[str] = field(default_factory=set)
    agents: list[str] = field(default_factory=list)  # created and not given up, oldest first
    agents_created: int = 0
    tabs: set[str] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    invitation: str | None = None
    invitation_uses: int = 0

    @property
    def acknowledged_http(self) -> int:
        return len(self.accounts) + len(self.teams)

    @property
    def acknowledged_team_api(self) -> int:
        """Agents created and tabs opened through the Team API."""
        return self.agents_created + len(self.tabs)

    @property
    def acknowledged(self) -> int:
        return self.acknowledged_http + self.acknowledged_team_api


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


async def owner_peer(url: str, team_id: str, data_dir: Path) -> tuple[HubClient, HostConnection]:
    """The owner's peer (bearer token), connected to the built-in host."""
    hub = HubClient(url)
    account = await hub.sign_in(OWNER, PASSWORD)
    host = None
    async with asyncio.timeout(60):
        while host is None:  # the built-in host links to the hub just after it listens
            host = next((h for h in await hub.hosts(team_id) if h["online"]), None)
            await asyncio.sleep(0 if host else 0.05)
    known = KnownHosts(data_dir.parent / f"{data_dir.name}-known-hosts.json")
    connection = await connect_to_host(hub, team_id, host["id"], known, account["id"])
    return hub, connection


async def tabs_come_back(connection: HostConnection, tally: Tally, data_dir: Path) -> None:
    """Every tab an earlier round saw saved is listed again; then one more is opened and
    seen in its team's state file. The file is written just after the answer (the
    documented window a kill may fall into), so the round waits to see it there: the
    kill then tests the restore, not that window."""
    listed = {tab["id"] for tab in (await connection.call("browser-control-v1/list_tabs"))["tabs"]}
    missing = tally.tabs - listed
    if missing:
        tally.problems.append(f"round {tally.rounds}: {len(missing)} tabs not restored")
    opened = await connection.call("browser-control-v1/new_tab", {"url": "about:blank"})
    deadline = asyncio.get_running_loop().time() + STATE_FILE_WAIT_SECONDS
    while not await asyncio.to_thread(is_saved, data_dir, opened["id"]):
        if asyncio.get_running_loop().time() > deadline:
            tally.problems.append(f"round {tally.rounds}: a new tab never reached its state file")
            return
        await asyncio.sleep(0.02)
    tally.tabs.add(opened["id"])


def is_saved(data_dir: Path, tab_id: str) -> bool:
    """Whether a team's state file under ``data_dir`` names the tab."""
    return any(tab_id in path.read_text() for path in data_dir.rglob(STATE_FILE))


async def team_api_writer(connection: HostConnection, tally: Tally, number: int) -> None:
    """Agents, one after another, until the connection goes away with the server.

    A team holds at most 200 agents: past KEPT_AGENTS the oldest, and any whose creation
    was never acknowledged, are deleted first (the oldest no longer expected, whether or
    not the kill lets the deletion finish)."""
    serial = 0
    with contextlib.suppress(ConnectionError, asyncio.TimeoutError):
        while True:
            serial += 1
            if len(tally.agents) >= KEPT_AGENTS:
                # Also the agents whose creation a kill cut off before its answer.
                listed = (await connection.call("agents-v1/list"))["agents"]
                kept = set(tally.agents[1:])
                tally.agents.pop(0)
                for agent in listed:
                    if agent["id"] not in kept:
                        await connection.call("agents-v1/delete", {"id": agent["id"]})
            agent = await connection.call("agents-v1/create", {"name": f"A{number}-{serial}"})
            tally.agents.append(agent["id"])
            tally.agents_created += 1


async def crash_round(data_dir: Path, tally: Tally, rng: random.Random) -> None:
    """One round: serve, write, SIGKILL at a random moment, then check the database."""
    number = tally.rounds
    async with serving(data_dir, expect_setup=number == 0) as served:
        work = _Round(served.url, tally, number)
        async with work.session() as owner:
            team_id = await work.owner_signs_in(owner, served.setup_code)
            code = await work.invitation(owner, team_id)
        hub, connection = await owner_peer(served.url, team_id, data_dir)
        try:
            await tabs_come_back(connection, tally, data_dir)
            writers = [asyncio.create_task(work.writer(code, w)) for w in range(WRITERS)]
            writers.append(asyncio.create_task(team_api_writer(connection, tally, number)))
            try:
                await asyncio.sleep(rng.uniform(0.05, 0.8))  # the kill's moment, not a wait
                served.kill()
                await served.process.wait()
                await connection.close()  # what was in flight fails now, not at ICE timeout
                await asyncio.gather(*writers)
            finally:
                for task in writers:
                    task.cancel()
        finally:
            await connection.close()
            await hub.close()
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
        agents = {row[0] for row in connection.execute("SELECT id FROM agents")}
        tally.lost = sorted(
            (tally.accounts - accounts) | (tally.teams - teams) | (set(tally.agents) - agents)
        )
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
