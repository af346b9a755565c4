"""Workspace limits: files and bytes per agent and per team, and the largest file."""

from __future__ import annotations

from dataclasses import dataclass

from server.common.errors import Conflict, InvalidArgument
from server.config import HostSettings
from server.host.workspace.folders import Usage


@dataclass(frozen=True, slots=True)
class WorkspaceLimits:
    """What one agent's workspace, and a team's together, may hold."""

    agent_files: int
    agent_bytes: int
    team_files: int
    team_bytes: int
    file_bytes: int

    @classmethod
    def from_settings(cls, host: HostSettings) -> WorkspaceLimits:
        return cls(
            agent_files=host.workspace_agent_max_files,
            agent_bytes=host.workspace_agent_max_bytes,
            team_files=host.workspace_team_max_files,
            team_bytes=host.workspace_team_max_bytes,
            file_bytes=host.workspace_file_max_bytes,
        )

    def check_file(self, size: int) -> None:
        """Refuses a file larger than any workspace takes."""
        if size > self.file_bytes:
            raise InvalidArgument(
                f"a workspace file may be at most {self.file_bytes} bytes; this one is {size}",
                code="workspaceFileTooLarge",
            )

    def check_write(
        self, own: Usage, own_entries: int, own_bytes: int, team: Usage, *, shared: bool
    ) -> None:
        """Refuses a write that would take a workspace (``own``, with ``own_entries`` files
        and folders and ``own_bytes`` after it) or its team (``team`` grown by the same
        amounts) past its limit. Folders count as files do: empty ones take room too.

        The shared workspace counts against the team's limits only.
        """
        grow_files, grow_bytes = own_entries - own.entries, own_bytes - own.bytes
        if not shared and (
            (grow_files > 0 and own_entries > self.agent_files)
            or (grow_bytes > 0 and own_bytes > self.agent_bytes)
        ):
            raise Conflict(
                f"this agent's workspace is full (at most {self.agent_files} files and folders, "
                f"{self.agent_bytes} bytes); delete files first",
                code="workspaceAgentFull",
            )
        team_files, team_bytes = team.entries + grow_files, team.bytes + grow_bytes
        if (grow_files > 0 and team_files > self.team_files) or (
            grow_bytes > 0 and team_bytes > self.team_bytes
        ):
            raise Conflict(
                f"the team's workspaces are full (at most {self.team_files} files and folders, "
                f"{self.team_bytes} bytes together); delete files first",
                code="workspaceTeamFull",
            )
