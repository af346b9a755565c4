"""Workspace files for agents (their tools) and for members (``workspace-v1``).

An agent reads and writes its own workspace and the team's shared one. A member
browses, downloads and uploads to the shared workspace, and to an agent's when they
see at least one of its threads; an admin or an owner to every agent's of the team.
An upload comes in chunks into a staging file outside every workspace and becomes a
workspace file only when it is complete, so nothing half-sent is ever read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from server.common.clock import Clock
from server.common.errors import Conflict, CrewhostError, InvalidArgument, NotFound
from server.common.roles import Role
from server.db.engine import Database
from server.host.storage.agents import AgentRepository
from server.host.storage.threads import ThreadRepository
from server.host.workspace.attachments import ImportedFile, imported
from server.host.workspace.folders import Entry, EntryKind, Usage
from server.host.workspace.paths import display_path, workspace_parts
from server.host.workspace.workspaces import WorkspaceRef, Workspaces, Written

log = logging.getLogger(__name__)

# Most bytes one download or upload chunk carries: its base64 (4/3 larger) and the
# envelope fit a Team API message (256 KiB).
MAX_CHUNK_BYTES = 128 * 1024
# Unfinished uploads one member may have at a time.
MAX_UPLOADS_PER_MEMBER = 4


@dataclass(frozen=True, slots=True)
class Member:
    """Who asks, as the Team API knows them."""

    team_id: str
    account_id: str
    role: Role


@dataclass(eq=False)
class Upload:
    id: str
    member: Member
    ref: WorkspaceRef
    path: str
    size: int
    expires_at: float
    staged: Path
    received: int = 0
    # One chunk, finish or cancel at a time: two chunks sent at one offset are one
    # chunk and a refusal, and a finish never reads a chunk half-appended.
    busy: asyncio.Lock = field(default_factory=asyncio.Lock)


class WorkspaceService:
    """Workspace files, for the agents' tools and for the members who may see them."""

    def __init__(
        self, db: Database, clock: Clock, workspaces: Workspaces, *, upload_seconds: float
    ) -> None:
        self._db = db
        self._clock = clock
        self._workspaces = workspaces
        self._upload_seconds = upload_seconds
        self._staging = workspaces.root.parent / "workspace-uploads"
        self._uploads: dict[str, Upload] = {}
        self._threads = ThreadRepository()
        self._agents = AgentRepository()

    # -- the agents' side -------------------------------------------------------------------

    async def write(self, ref: WorkspaceRef, path: str, data: bytes) -> Written:
        return await self._workspaces.write(ref, path, data)

    async def write_all(
        self, ref: WorkspaceRef, files: Sequence[tuple[str, bytes]]
    ) -> list[Written]:
        """Several files, the limits checked for all of them before any is written."""
        return await self._workspaces.write_all(ref, files)

    async def read(self, ref: WorkspaceRef, path: str) -> bytes:
        return await self._workspaces.read(ref, path)

    async def list_folder(self, ref: WorkspaceRef, path: str = "") -> list[Entry]:
        return await self._workspaces.list_folder(ref, path)

    async def size_of(self, ref: WorkspaceRef, path: str) -> int | None:
        """The size of the file at ``path``; None when there is none (or no such path may be)."""
        try:
            return await self._workspaces.read_size(ref, path)
        except InvalidArgument:
            return None

    async def delete(self, ref: WorkspaceRef, path: str) -> EntryKind:
        return await self._workspaces.delete(ref, path)

    async def usage(self, ref: WorkspaceRef) -> Usage:
        return await self._workspaces.usage(ref)

    async def remove_agent_workspace(self, team_id: str, agent_id: str) -> None:
        """Delete an agent's workspace with all in it (the agent is being deleted)."""
        folder = self._workspaces.folder(WorkspaceRef(team_id, agent_id))
        await asyncio.to_thread(folder.remove)

    async def import_attachments(
        self, member: Member, agent_id: str, paths: Sequence[str], *, max_bytes: int
    ) -> list[ImportedFile]:
        """Copy files of the agent's workspace, as the member sees it, each to a path of its
        own named by its hash: the attachments of a message (each at most ``max_bytes``).
        All are read and checked, and the quotas checked for all the copies together,
        before any is copied, so a refusal copies nothing."""
        ref = await self.member_ref(member, agent_id)
        found: list[tuple[ImportedFile, bytes]] = []
        for path in paths:
            parts = workspace_parts(path)
            data = await self._workspaces.read(ref, path)
            if len(data) > max_bytes:
                raise InvalidArgument(
                    f"an attachment may be at most {max_bytes} bytes; {path!r} is {len(data)}",
                    code="attachmentTooLarge",
                )
            # A hash of up to 20 MiB: off the loop, as the read was.
            found.append((await asyncio.to_thread(imported, parts[-1], data), data))
        # A copy already there from an earlier message is kept, not written again.
        copies = [
            (copy.path, data)
            for copy, data in found
            if await self._workspaces.read_size(ref, copy.path) != len(data)
        ]
        await self._workspaces.write_all(ref, copies)
        return [copy for copy, _ in found]

    async def read_attachment(self, ref: WorkspaceRef, path: str, sha256: str) -> bytes | None:
        """The attachment's bytes, or None when they are gone or no longer the ones sent."""
        try:
            data = await self._workspaces.read(ref, path)
        except CrewhostError:
            return None
        digest = await asyncio.to_thread(lambda: hashlib.sha256(data).hexdigest())
        return data if digest == sha256 else None

    # -- the members' side ------------------------------------------------------------------

    async def member_ref(self, member: Member, agent_id: str | None) -> WorkspaceRef:
        """The workspace ``agent_id`` names (None: the shared one), if ``member`` may see it.

        An agent the member may not see is as unknown as a missing one."""
        ref = WorkspaceRef(member.team_id, agent_id)
        if agent_id is None:
            return ref
        async with self._db.read() as conn:
            agent = await self._agents.get_agent(conn, member.team_id, agent_id)
            sees = agent is not None and (
                member.role.at_least(Role.ADMIN)
                or bool(
                    await self._threads.list_threads(
                        conn, member.team_id, agent_id, member.account_id
                    )
                )
            )
        if not sees:
            raise NotFound("no such agent in this team", code="agentNotFound")
        return ref

    async def browse(self, member: Member, agent_id: str | None, path: str) -> list[Entry]:
        return await self._workspaces.list_folder(await self.member_ref(member, agent_id), path)

    async def download(
        self, member: Member, agent_id: str | None, path: str, offset: int, length: int
    ) -> tuple[bytes, int]:
        """Up to ``length`` bytes (at most ``MAX_CHUNK_BYTES``) from ``offset``, and the size."""
        ref = await self.member_ref(member, agent_id)
        length = min(length, MAX_CHUNK_BYTES)
        return await self._workspaces.read_range(ref, path, offset, length)

    async def remove(self, member: Member, agent_id: str | None, path: str) -> EntryKind:
        return await self._workspaces.delete(await self.member_ref(member, agent_id), path)

    async def start_upload(
        self, member: Member, agent_id: str | None, path: str, size: int
    ) -> Upload:
        """Begin an upload of ``size`` bytes to ``path``; refused at once when it cannot fit."""
        ref = await self.member_ref(member, agent_id)
        parts = workspace_parts(path)
        self._workspaces.limits.check_file(size)
        self._drop_expired()
        mine = [u for u in self._uploads.values() if u.member == member]
        if len(mine) >= MAX_UPLOADS_PER_MEMBER:
            raise Conflict(
                f"finish or cancel an upload first (at most {MAX_UPLOADS_PER_MEMBER} at a time)",
                code="workspaceUploadLimit",
            )
        upload_id = secrets.token_hex(16)
        staged = self._staging / member.team_id / upload_id
        await asyncio.to_thread(_create_staged, staged)
        upload = Upload(
            upload_id,
            member,
            ref,
            display_path(parts),
            size,
            self._clock.now() + self._upload_seconds,
            staged,
        )
        self._uploads[upload_id] = upload
        return upload

    async def upload_chunk(self, member: Member, upload_id: str, offset: int, data: bytes) -> int:
        """Append one chunk at ``offset`` (the bytes received so far); the new count."""
        upload = self._upload(member, upload_id)
        if len(data) > MAX_CHUNK_BYTES:
            raise InvalidArgument(
                f"a chunk may carry at most {MAX_CHUNK_BYTES} bytes", code="workspaceChunkInvalid"
            )
        async with upload.busy:
            return await self._append_chunk(self._upload(member, upload_id), offset, data)

    async def _append_chunk(self, upload: Upload, offset: int, data: bytes) -> int:
        if offset != upload.received:
            raise InvalidArgument(
                f"the next chunk starts at byte {upload.received}, not {offset}",
                code="workspaceChunkInvalid",
            )
        if upload.received + len(data) > upload.size:
            raise InvalidArgument(
                f"the upload is {upload.size} bytes; this chunk goes past its end",
                code="workspaceChunkInvalid",
            )
        await asyncio.to_thread(_append, upload.staged, data)
        upload.received += len(data)
        upload.expires_at = self._clock.now() + self._upload_seconds
        return upload.received

    async def finish_upload(self, member: Member, upload_id: str) -> Written:
        """The uploaded file takes its place in the workspace (atomically, under the quotas)."""
        async with self._upload(member, upload_id).busy:
            upload = self._upload(member, upload_id)  # a cancel may have come first
            if upload.received != upload.size:
                raise Conflict(
                    f"{upload.received} of {upload.size} bytes arrived; send the rest first",
                    code="workspaceUploadIncomplete",
                )
            self._uploads.pop(upload_id, None)
        try:
            data = await asyncio.to_thread(upload.staged.read_bytes)
            return await self._workspaces.write(upload.ref, upload.path, data)
        finally:
            await asyncio.to_thread(_remove_file, upload.staged)

    async def cancel_upload(self, member: Member, upload_id: str) -> None:
        async with self._upload(member, upload_id).busy:
            upload = self._upload(member, upload_id)
            self._uploads.pop(upload_id, None)
        await asyncio.to_thread(_remove_file, upload.staged)

    def _upload(self, member: Member, upload_id: str) -> Upload:
        self._drop_expired()
        upload = self._uploads.get(upload_id)
        if upload is None or upload.member != member:
            raise NotFound("no such upload; it may have expired", code="workspaceUploadNotFound")
        return upload

    def _drop_expired(self) -> None:
        now = self._clock.now()
        for upload in [u for u in self._uploads.values() if u.expires_at <= now]:
            del self._uploads[upload.id]
            _remove_file(upload.staged)

    async def recover(self) -> None:
        """At start-up: what a former run of the host left behind goes. Its unfinished
        uploads were held in its memory, so their staged files are nobody's; a write it
        cut short left a temporary file in a workspace, taking room no quota counts."""
        started = time.time()
        await asyncio.to_thread(shutil.rmtree, self._staging, ignore_errors=True)
        swept = await asyncio.to_thread(self._workspaces.sweep, started)
        if swept:
            log.info("removed %d temporary files a former run left in workspaces", swept)

    def close(self) -> None:
        """Drop every unfinished upload (the host is stopping)."""
        for upload in list(self._uploads.values()):
            _remove_file(upload.staged)
        self._uploads.clear()


def _create_staged(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _remove_file(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
