"""Shared by the route tests: a team with an owner and a member, each connected to the host."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from peer.connection import HostConnection, TeamApiCallError
from tests.support.hub_server import RunningHub
from tests.support.peers import Member, peer_member, wait_linked


@dataclass
class Team:
    team_id: str
    admin: HostConnection
    member: HostConnection


@pytest.fixture
async def team(server: RunningHub, tmp_path: Path) -> AsyncIterator[Team]:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, "member@example.com", "member")
    host_id = await wait_linked(server)
    admin_peer = await peer_member(server, "owner@example.com", tmp_path)
    member_peer = await peer_member(server, "member@example.com", tmp_path)
    admin = await admin_peer.connect(host_id)
    member = await member_peer.connect(host_id)
    yield Team(team_id, admin, member)
    for connection in (admin, member):
        await connection.close()
    await admin_peer.hub.close()
    await member_peer.hub.close()


async def refused(connection: HostConnection, route: str, args: Mapping[str, object]) -> str:
    with pytest.raises(TeamApiCallError) as caught:
        await connection.call(route, dict(args))
    return caught.value.code


@dataclass
class Roles:
    """A team with one connection for each role."""

    team_id: str
    owner: HostConnection
    admin: HostConnection
    member: HostConnection


@pytest.fixture
async def roles(server: RunningHub, tmp_path: Path) -> AsyncIterator[Roles]:
    owner_client = await server.sign_up_owner()
    team_id = await server.first_team_id(owner_client)
    await server.invite(owner_client, team_id, "admin@example.com", "admin")
    await server.invite(owner_client, team_id, "member@example.com", "member")
    host_id = await wait_linked(server)
    members: list[Member] = []
    connections: list[HostConnection] = []
    for email in ("owner@example.com", "admin@example.com", "member@example.com"):
        members.append(await peer_member(server, email, tmp_path))
        connections.append(await members[-1].connect(host_id))
    yield Roles(team_id, *connections)
    for connection in connections:
        await connection.close()
    for member in members:
        await member.hub.close()


def database_bytes(folder: Path) -> bytes:
    """The SQLite database and its write-ahead log, as bytes on disk (none on PostgreSQL)."""
    return b"".join(path.read_bytes() for path in folder.glob("crewhost.db*") if path.is_file())
