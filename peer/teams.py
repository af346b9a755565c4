"""Finding one of the person's teams by its id or its name."""

from __future__ import annotations

from typing import Any

from peer.hub_client import HubClient


class TeamNotFound(Exception):
    """No team of the person's, or more than one, has the name or id the person gave."""

    code = "teamNotFound"


async def find_team(hub: HubClient, wanted: str | None) -> dict[str, Any]:
    """The team whose id is ``wanted``, else the one whose name is (any case, exact);
    the person's first team when ``wanted`` is None."""
    teams = await hub.teams()
    if not teams:
        raise TeamNotFound("you belong to no team yet")
    if wanted is None:
        return teams[0]
    for team in teams:
        if team["id"] == wanted:
            return team
    named = [t for t in teams if t["name"].casefold() == wanted.strip().casefold()]
    if len(named) == 1:
        return named[0]
    if named:
        ids = ", ".join(f"{t['id']} ({t['name']})" for t in named)
        raise TeamNotFound(f'{len(named)} of your teams are named "{wanted}"; give an id: {ids}')
    names = ", ".join(f'"{t["name"]}"' for t in teams)
    raise TeamNotFound(f'none of your teams is named "{wanted}" or has that id; yours: {names}')
