"""The registry of hosts a team can reach."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HostEntry:
    id: str
    name: str
    builtin: bool
    online: bool


class HostService:
    """Lists the hosts of a team. The built-in host of ``crewhost serve`` serves every team."""

    def __init__(self, builtin: HostEntry | None) -> None:
        self._builtin = builtin

    async def list_hosts(self, team_id: str) -> list[HostEntry]:
        return [self._builtin] if self._builtin is not None else []
