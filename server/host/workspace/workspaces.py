"""Where each workspace lives, and its file calls under the quotas.

``<data_dir>/workspace/<team_id>/agents/<agent_id>/`` is one agent's own workspace and
``<data_dir>/workspace/<team_id>/shared/`` the team's shared one. Writes of one team
run one at a time, so a quota is checked against what is really there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from server.common.errors import CrewhostError, InvalidArgument, NotFound
from server.host.workspace.folders import ConfinedFolder, Entry, EntryKind, Usage
from server.host.workspace.paths import RESERVED_PREFIX, workspace_parts
from server.host.workspace.quotas import WorkspaceLimits

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class WorkspaceRef:
    """One workspace: an agent's own (``agent_id``) or the team's shared one (None)."""

    team_id: str
    agent_id: str | None

    @property
    def shared(self) -> bool:
        return self.agent_id is None


@dataclass(frozen=True, slots=True)
class Written:
    path: str
    size: int
    created: bool


class Workspaces:
    """Every workspace of a host's teams under one data folder."""

    def __init__(self, data_dir: Path, limits: WorkspaceLimits) -> None:
        self.data_dir = data_dir
        self.root = data_dir / "workspace"
        self.limits = limits
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def sweep(self, before: float) -> int:
        """Remove the temporary files of writes a crash cut short (a write that fails
        removes its own), those older than ``before`` (a time as ``time.time`` gives it),
        and say how many; links are not followed."""
        if not self.root.is_dir() or self.root.is_symlink():
            return 0
        removed = 0
        for _, _, names, fd in os.fwalk(self.root, follow_symlinks=False):
            for name in names:
                if not name.startswith(RESERVED_PREFIX):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode) and info.st_mtime < before:
                        os.unlink(name, dir_fd=fd)
                        removed += 1
        return removed

    def _team_parts(self, team_id: str) -> tuple[str, ...]:
        if not _ID.fullmatch(team_id):
            raise InvalidArgument("malformed team id", code="invalidTeamId")
        return ("workspace", team_id)

    def folder(self, ref: WorkspaceRef) -> ConfinedFolder:
        team = self._team_parts(ref.team_id)
        if ref.agent_id is None:
            return ConfinedFolder(self.data_dir, (*team, "shared"))
        if not _ID.fullmatch(ref.agent_id):
            raise InvalidArgument("malformed agent id", code="agentNotFound")
        return ConfinedFolder(self.data_dir, (*team, "agents", ref.agent_id))

    def _team_usage(self, team_id: str) -> Usage:
        """What every workspace of the team holds together (its own folders only)."""
        total = self.folder(WorkspaceRef(team_id, None)).usage()
        agents = ConfinedFolder(self.data_dir, (*self._team_parts(team_id), "agents"))
        for agent_id in agents.subfolders():
            if _ID.fullmatch(agent_id):
                total += self.folder(WorkspaceRef(team_id, agent_id)).usage()
        return total

    async def write(self, ref: WorkspaceRef, path: str, data: bytes) -> Written:
        """Write one file atomically, within the file, workspace and team limits (a folder
        the write creates counts as a file does)."""
        [written] = await self.write_all(ref, [(path, data)])
        return written

    async def write_all(
        self, ref: WorkspaceRef, files: Sequence[tuple[str, bytes]]
    ) -> list[Written]:
        """Write several files, each atomically, as ``write`` does; the limits are checked
        for all of them together before any is written, so a refusal writes none. Should a
        write still fail (a full disk), the files this call created are removed again."""
        planned = [(workspace_parts(path), data) for path, data in files]
        if not planned:
            return []
        for _, data in planned:
            self.limits.check_file(len(data))
        folder = self.folder(ref)
        async with self._locks[ref.team_id]:

            def write_all() -> list[Written]:
                self._check_room(ref, folder, planned)
                written: list[Written] = []
                created: list[tuple[str, ...]] = []
                try:
                    for parts, data in planned:
                        new = folder.size_of(parts) is None
                        folder.write(parts, data)
                        written.append(Written("/".join(parts), len(data), new))
                        if new:
                            created.append(parts)
                except BaseException:
                    for parts in created:
                        with contextlib.suppress(CrewhostError, OSError):
                            folder.delete(parts)
                    raise
                return written

            return await asyncio.to_thread(write_all)

    def _check_room(
        self,
        ref: WorkspaceRef,
        folder: ConfinedFolder,
        planned: Sequence[tuple[tuple[str, ...], bytes]],
    ) -> None:
        """Refuses the planned writes unless all of them fit the quotas together (run under
        the team's lock, so what is on disk stays as counted)."""
        own = folder.usage()
        # The size each path will have, against the size it has now (None: no file yet).
        final: dict[tuple[str, ...], tuple[int | None, int]] = {}
        new_folders: set[tuple[str, ...]] = set()
        for parts, data in planned:
            old = final[parts][0] if parts in final else folder.size_of(parts)
            final[parts] = (old, len(data))
            if old is None:
                # The last ``missing`` folders above the file do not exist yet.
                missing = folder.folders_missing(parts[:-1])
                depth = len(parts) - 1
                new_folders.update(parts[:end] for end in range(depth - missing + 1, depth + 1))
        added = len(new_folders) + sum(1 for old, _ in final.values() if old is None)
        size = own.bytes + sum(new - (old or 0) for old, new in final.values())
        team = self._team_usage(ref.team_id)
        self.limits.check_write(own, own.entries + added, size, team, shared=ref.shared)

    async def read(self, ref: WorkspaceRef, path: str) -> bytes:
        parts = workspace_parts(path)
        folder = self.folder(ref)
        return await asyncio.to_thread(folder.read, parts, max_bytes=self.limits.file_bytes)

    async def read_range(
        self, ref: WorkspaceRef, path: str, offset: int, length: int
    ) -> tuple[bytes, int]:
        parts = workspace_parts(path)
        return await asyncio.to_thread(self.folder(ref).read_range, parts, offset, length)

    async def read_size(self, ref: WorkspaceRef, path: str) -> int | None:
        """The size of the file at ``path``; None when there is none."""
        parts = workspace_parts(path)
        return await asyncio.to_thread(self.folder(ref).size_of, parts)

    async def list_folder(self, ref: WorkspaceRef, path: str = "") -> list[Entry]:
        parts = workspace_parts(path, allow_root=True)
        folder = self.folder(ref)

        def listing() -> list[Entry]:
            try:
                return folder.list_folder(parts)
            except NotFound:
                if parts:
                    raise
                return []  # a workspace nobody wrote to yet is empty, not missing

        return await asyncio.to_thread(listing)

    async def delete(self, ref: WorkspaceRef, path: str) -> EntryKind:
        parts = workspace_parts(path)
        folder = self.folder(ref)
        async with self._locks[ref.team_id]:
            return await asyncio.to_thread(folder.delete, parts)

    async def usage(self, ref: WorkspaceRef) -> Usage:
        return await asyncio.to_thread(self.folder(ref).usage)
