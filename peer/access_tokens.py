"""``crewhost-peer tokens``: personal access tokens for the hub's MCP endpoint, made,
listed and revoked through the hub's API."""

from __future__ import annotations

import argparse
import time
from typing import Any

from peer.hub_client import HubClient
from peer.teams import find_team

MCP_PATH = "/v1/mcp"


class NoHost(Exception):
    """The team has no host to make a token for."""


async def _host_id(hub: HubClient, team_id: str, wanted: str | None) -> str:
    if wanted is not None:
        return wanted
    hosts = await hub.hosts(team_id)
    online = [h for h in hosts if h["online"]] or hosts
    if not online:
        raise NoHost("the team has no host")
    return str(online[0]["id"])


def _state(token: dict[str, Any]) -> str:
    if token["revoked"]:
        return "revoked"
    return "live" if token["live"] else "expired"


def _day(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d", time.gmtime(at))


async def tokens_command(hub: HubClient, args: argparse.Namespace) -> list[list[str]] | None:
    """Run one ``tokens`` action; the rows of a list (None for the others, which print)."""
    team_id = str((await find_team(hub, args.team))["id"])
    base = f"/v1/teams/{team_id}/access-tokens"
    if args.tokens_command == "create":
        host_id = await _host_id(hub, team_id, args.host)
        body = {
            "name": args.name,
            "hostId": host_id,
            "scope": args.scope,
            "expiresInDays": args.days,
        }
        created = await hub.request("POST", base, body)
        token = created["token"]
        print(f"token   {token['id']}")
        print(f"secret  {created['secret']}")
        print(f"url     {hub.base_url}{MCP_PATH}")
        print(f"expires {_day(token['expiresAt'])}")
        print(
            "The secret is shown this once; give it to your MCP client as the header "
            "'Authorization: Bearer <secret>'."
        )
        return None
    if args.tokens_command == "revoke":
        await hub.request("DELETE", f"{base}/{args.token}")
        print(f"revoked {args.token}")
        return None
    listed = await hub.request("GET", base + ("/all" if args.all else ""))
    return [
        [t["id"], _state(t), t["scope"], _day(t["expiresAt"]), _day(t["lastUsedAt"]), t["name"]]
        for t in listed["tokens"]
    ]
