"""Attachment types come from the name alone; import copies the bytes under their hash."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from server.common.errors import CrewhostError
from server.common.roles import Role
from server.host.services.workspace import Member, WorkspaceService
from server.host.storage.agents import AgentBrowserChoice, AgentRepository
from server.host.workspace.attachments import attachment_type
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


async def test_import_copies_and_hashes_under_a_limit(tmp_path: Path) -> None:
    async with scratch_database("sqlite", tmp_path) as database:
        db = database.open()
        await db.migrate()
        async with db.write() as conn:
            agent = AgentBrowserChoice("agent-1", "team-a", "Scout", False, None)
            await AgentRepository().add_agent(conn, agent, 0.0)
        limits = WorkspaceLimits(
            agent_files=10, agent_bytes=1000, team_files=10, team_bytes=1000, file_bytes=100
        )
        service = WorkspaceService(
            db, FakeClock(), Workspaces(tmp_path / "data", limits), upload_seconds=60
        )
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
        await db.close()
