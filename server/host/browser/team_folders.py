"""The teams' browser folders: ``<data_dir>/browser/<team_id>/``, one per team.

Every partition folder and tab state file of a team lives in its folder, so two teams
never share a profile; a team id that could name a path elsewhere is refused here.
"""

from __future__ import annotations

import re
from pathlib import Path

from server.common.errors import InvalidArgument

_TEAM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class TeamFolders:
    """Where each team's browser data lives under the host's data folder."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "browser"

    def of(self, team_id: str) -> Path:
        """The team's browser folder; refuses an id that could name a path elsewhere."""
        if not _TEAM_ID.fullmatch(team_id):
            raise InvalidArgument("malformed team id", code="invalidTeamId")
        return self.root / team_id

    def teams_with(self, file_name: str) -> list[str]:
        """The teams whose folder holds ``file_name`` (blocking: run it off the event loop)."""
        if not self.root.is_dir():
            return []
        return [
            p.name
            for p in self.root.iterdir()
            if _TEAM_ID.fullmatch(p.name) and (p / file_name).is_file()
        ]
