"""Attachment types come from the name alone; import copies the bytes under their hash,
all of them or, when a quota refuses one, none."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from server.common.errors import CrewhostError
from server.common.roles import Role
from server.host.services.workspace import Member, WorkspaceService
from server.host.storage.agents import AgentBrowserChoice, AgentRepository
from server.host.workspace.attachments import attachment_type
from server.host.workspace.folders import Usage
from server.host.workspace.quotas import WorkspaceLimits
from server.host.workspace.workspaces import WorkspaceRef, Workspaces
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database


@pytest.mark.parametrize(
    ("name", "mime", "kind", "preview"),
    [
        ("photo.png", "image/png", "image", "image"),
        ("photo.JPG", "image/jpeg", "image", "image"),
        ("photo.jpeg", "image/jpeg", "image", "image"),
        ("anim.gif", "image/gif", "image", "image"),
        ("shot.webp", "image/webp", "image", "image"),
        ("logo.svg", "image/svg+xml", "file", "image"),
        ("song.mp3", "audio/mpeg", "file", "none"),
        ("clip.mov", "video/quicktime", "file", "none"),
        ("clip.mp4", "video/mp4", "file", "none"),
        ("archive.zip", "application/zip", "file", "none"),
        ("photo.heic", "application/octet-stream", "file", "none"),
        ("scan.tiff", "application/octet-stream", "file", "none"),
        ("README", "application/octet-stream", "file", "none"),
        (".png", "application/octet-stream", "file", "none"),
        ("notes.txt", "text/plain", "file", "none"),
    ],
)
def test_the_type_comes_from_the_extension(name: str, mime: str, kind: str, preview: str) -> None:
    found = attachment_type(name)
    assert (found.mime, found.kind, found.preview) == (mime, kind, preview)


@asynccontextmanager
async def scouts_workspace(
    tmp_path: Path, limits: WorkspaceLimits
) -> AsyncIterator[WorkspaceService]:
    """The workspace service of team-a, whose agent agent-1 (Scout) is in a new database."""
    async with scratch_database("sqlite", tmp_path) as database:
        db = database.open()
        await db.migrate()
        async with db.write() as conn:
            agent = AgentBrowserChoice("agent-1", "team-a", "Scout", False, None)
            await AgentRepository().add_agent(conn, agent, 0.0)
        try:
            yield WorkspaceService(
                db, FakeClock(), Workspaces(tmp_path / "data", limits), upload_seconds=60
            )
        finally:
            await db.close()


async def test_import_copies_and_hashes_under_a_limit(tmp_path: Path) -> None:
    limits = WorkspaceLimits(
        agent_files=10, agent_bytes=1000, team_files=10, team_bytes=1000, file_bytes=100
    )
    async with scouts_workspace(tmp_path, limits) as service:
        admin = Member("team-a", "owner", Role.OWNER)
        ref = WorkspaceRef("team-a", "agent-1")
        await service.write(ref, "inbox/photo.png", b"png bytes")
        [copy] = await service.import_attachments(
            admin, "agent-1", ["inbox/photo.png"], max_bytes=50
        )
        digest = hashlib.sha256(b"png bytes").hexdigest()
        assert (copy.sha256, copy.size, copy.mime) == (digest, 9, "image/png")
        assert copy.path == f"attachments/{digest[:16]}/photo.png"
        # A later change to the original leaves the attachment as it was sent.
        await service.write(ref, "inbox/photo.png", b"changed")
        assert await service.read(ref, copy.path) == b"png bytes"
        assert await service.read_attachment(ref, copy.path, digest) == b"png bytes"
        await service.write(ref, copy.path, b"tampered")
        assert await service.read_attachment(ref, copy.path, digest) is None
        await service.write(ref, "big.bin", b"x" * 51)
        await service.write(ref, "small.txt", b"small")
        with pytest.raises(CrewhostError) as caught:
            await service.import_attachments(
                admin, "agent-1", ["small.txt", "big.bin"], max_bytes=50
            )
        assert caught.value.code == "attachmentTooLarge"
        # Nothing was copied: not even the file that fitted.
        folders = [e.name for e in await service.list_folder(ref, "attachments")]
        assert folders == [copy.path.split("/")[1]]
        member = Member("team-a", "member", Role.MEMBER)
        with pytest.raises(CrewhostError) as unseen:
            await service.import_attachments(member, "agent-1", ["inbox/photo.png"], max_bytes=50)
        assert unseen.value.code == "agentNotFound"


@pytest.mark.parametrize(
    ("filled", "limits", "code"),
    [
        (
            WorkspaceRef("team-a", "agent-1"),
            WorkspaceLimits(
                agent_files=100, agent_bytes=70, team_files=100, team_bytes=1000, file_bytes=100
            ),
            "workspaceAgentFull",
        ),
        (
            WorkspaceRef("team-a", None),
            WorkspaceLimits(
                agent_files=100, agent_bytes=1000, team_files=100, team_bytes=70, file_bytes=100
            ),
            "workspaceTeamFull",
        ),
    ],
    ids=["agent", "team"],
)
async def test_an_import_refused_by_a_quota_copies_nothing(
    tmp_path: Path, filled: WorkspaceRef, limits: WorkspaceLimits, code: str
) -> None:
    async with scouts_workspace(tmp_path, limits) as service:
        admin = Member("team-a", "owner", Role.OWNER)
        ref = WorkspaceRef("team-a", "agent-1")
        shared = WorkspaceRef("team-a", None)
        # 30 + 10 + 12 bytes of 70: a copy of the first upload fits, of both does not.
        await service.write(filled, "filler.bin", b"f" * 30)
        await service.write(ref, "uploads/a.txt", b"a" * 10)
        await service.write(ref, "uploads/b.txt", b"b" * 12)

        async def usages() -> tuple[Usage, Usage]:
            return await service.usage(ref), await service.usage(shared)

        before = await usages()
        with pytest.raises(CrewhostError) as caught:
            await service.import_attachments(
                admin, "agent-1", ["uploads/a.txt", "uploads/b.txt"], max_bytes=50
            )
        assert caught.value.code == code
        assert "attachments" not in [e.name for e in await service.list_folder(ref)]
        assert await usages() == before
        # A copy that was there before the refused import stays.
        [kept] = await service.import_attachments(admin, "agent-1", ["uploads/a.txt"], max_bytes=50)
        sent_once = await usages()
        with pytest.raises(CrewhostError):
            await service.import_attachments(
                admin, "agent-1", ["uploads/a.txt", "uploads/b.txt"], max_bytes=50
            )
        assert [e.name for e in await service.list_folder(ref, "attachments")] == [
            kept.path.split("/")[1]
        ]
        assert await service.read(ref, kept.path) == b"a" * 10
        assert await usages() == sent_once
        # With room, both are copied.
        await service.delete(filled, "filler.bin")
        copies = await service.import_attachments(
            admin, "agent-1", ["uploads/a.txt", "uploads/b.txt"], max_bytes=50
        )
        assert [await service.read(ref, copy.path) for copy in copies] == [b"a" * 10, b"b" * 12]


async def test_attachments_are_hashed_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An attachment may be 20 MiB, and an image is read back and checked every turn."""
    on_main: list[bool] = []
    real_sha256 = hashlib.sha256

    def sha256(data: bytes = b"") -> Any:
        if data == b"png bytes":
            on_main.append(threading.current_thread() is threading.main_thread())
        return real_sha256(data)

    limits = WorkspaceLimits(
        agent_files=10, agent_bytes=1000, team_files=10, team_bytes=1000, file_bytes=100
    )
    async with scouts_workspace(tmp_path, limits) as service:
        ref = WorkspaceRef("team-a", "agent-1")
        await service.write(ref, "inbox/photo.png", b"png bytes")
        owner = Member("team-a", "owner", Role.OWNER)
        monkeypatch.setattr(hashlib, "sha256", sha256)
        [copy] = await service.import_attachments(
            owner, "agent-1", ["inbox/photo.png"], max_bytes=50
        )
        assert await service.read_attachment(ref, copy.path, copy.sha256) == b"png bytes"
    assert on_main == [False, False]
