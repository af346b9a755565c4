"""Workspaces on a real file system: links planted inside are never followed, a write that
dies before its rename leaves the old file, and the quotas hold per agent and per team."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any, cast

import pytest

from server.common.errors import CrewhostError
from server.host.services.workspace import WorkspaceService
from server.host.workspace.folders import ConfinedFolder
from server.host.workspace.paths import RESERVED_PREFIX
from server.host.workspace.quotas import WorkspaceLimits
from server.host.workspace.workspaces import WorkspaceRef, Workspaces

TEAM = "team-a"
AGENT = WorkspaceRef(TEAM, "agent-1")
OTHER = WorkspaceRef(TEAM, "agent-2")
SHARED = WorkspaceRef(TEAM, None)
ROOMY = WorkspaceLimits(
    agent_files=100, agent_bytes=1 << 20, team_files=1000, team_bytes=1 << 22, file_bytes=1 << 20
)


@pytest.fixture
def workspaces(tmp_path: Path) -> Workspaces:
    return Workspaces(tmp_path / "data", ROOMY)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside every workspace, with a file a link inside may point at."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("not yours")
    return folder


async def code_of(call: object) -> str:
    with pytest.raises(CrewhostError) as caught:
        await call  # type: ignore[misc]
    return caught.value.code


async def test_write_read_list_delete(workspaces: Workspaces) -> None:
    written = await workspaces.write(AGENT, "notes/prices.md", b"# Prices\n")
    assert (written.path, written.size, written.created) == ("notes/prices.md", 9, True)
    assert await workspaces.read(AGENT, "notes/prices.md") == b"# Prices\n"
    again = await workspaces.write(AGENT, "notes/prices.md", b"# Prices 2\n")
    assert not again.created
    top = await workspaces.list_folder(AGENT)
    assert [(e.name, e.kind) for e in top] == [("notes", "folder")]
    inner = await workspaces.list_folder(AGENT, "notes")
    assert [(e.name, e.kind, e.size) for e in inner] == [("prices.md", "file", 11)]
    assert await workspaces.delete(AGENT, "notes") == "folder"
    assert await workspaces.list_folder(AGENT) == []
    assert await code_of(workspaces.read(AGENT, "notes/prices.md")) == "workspaceNotFound"


async def test_workspaces_are_apart(workspaces: Workspaces) -> None:
    await workspaces.write(AGENT, "a.txt", b"mine")
    await workspaces.write(SHARED, "a.txt", b"ours")
    assert await code_of(workspaces.read(OTHER, "a.txt")) == "workspaceNotFound"
    assert await workspaces.read(SHARED, "a.txt") == b"ours"
    assert await workspaces.read(AGENT, "a.txt") == b"mine"
    other_team = WorkspaceRef("team-b", "agent-1")
    assert await code_of(workspaces.read(other_team, "a.txt")) == "workspaceNotFound"


async def test_a_folder_link_planted_inside_is_never_followed(
    workspaces: Workspaces, outside: Path
) -> None:
    await workspaces.write(AGENT, "keep.txt", b"x")
    root = workspaces.folder(AGENT).root
    (root / "escape").symlink_to(outside, target_is_directory=True)
    for call in (
        workspaces.read(AGENT, "escape/secret.txt"),
        workspaces.write(AGENT, "escape/new.txt", b"planted"),
        workspaces.list_folder(AGENT, "escape"),
        workspaces.delete(AGENT, "escape/secret.txt"),
    ):
        assert await code_of(call) == "workspacePathInvalid"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    # The link itself is not listed, and deleting it removes the link, not what it names.
    assert [e.name for e in await workspaces.list_folder(AGENT)] == ["keep.txt"]
    assert await workspaces.delete(AGENT, "escape") == "file"
    assert (outside / "secret.txt").read_text() == "not yours"


async def test_a_file_link_planted_inside_is_never_followed(
    workspaces: Workspaces, outside: Path
) -> None:
    await workspaces.write(AGENT, "keep.txt", b"x")
    root = workspaces.folder(AGENT).root
    (root / "link.txt").symlink_to(outside / "secret.txt")
    assert await code_of(workspaces.read(AGENT, "link.txt")) == "workspacePathInvalid"
    # A write replaces the link with a file of its own; the file it named is unchanged.
    await workspaces.write(AGENT, "link.txt", b"new")
    assert not (root / "link.txt").is_symlink()
    assert (outside / "secret.txt").read_text() == "not yours"
    assert await workspaces.read(AGENT, "link.txt") == b"new"


async def test_a_workspace_root_that_is_a_link_is_refused(
    workspaces: Workspaces, outside: Path
) -> None:
    root = workspaces.folder(AGENT).root
    root.parent.mkdir(parents=True)
    root.symlink_to(outside, target_is_directory=True)
    assert await code_of(workspaces.read(AGENT, "secret.txt")) == "workspacePathInvalid"
    assert (await workspaces.usage(AGENT)).files == 0


async def test_a_crash_before_the_rename_leaves_the_old_file(
    workspaces: Workspaces, monkeypatch: pytest.MonkeyPatch
) -> None:
    await workspaces.write(AGENT, "report.txt", b"old report")

    def crash(folder: int, temporary: str, name: str) -> None:
        # The new bytes are written and synced, under their temporary name.
        assert os.stat(temporary, dir_fd=folder).st_size == len(b"new report, longer")
        raise OSError("the disk went away")

    monkeypatch.setattr(ConfinedFolder, "replace", staticmethod(crash))
    with pytest.raises(OSError, match="disk went away"):
        await workspaces.write(AGENT, "report.txt", b"new report, longer")
    monkeypatch.undo()
    assert await workspaces.read(AGENT, "report.txt") == b"old report"
    root = workspaces.folder(AGENT).root
    assert os.listdir(root) == ["report.txt"]


async def test_a_temporary_file_is_neither_listed_nor_a_name(workspaces: Workspaces) -> None:
    await workspaces.write(AGENT, "a.txt", b"x")
    (workspaces.folder(AGENT).root / f"{RESERVED_PREFIX}left").write_bytes(b"leftover")
    assert [e.name for e in await workspaces.list_folder(AGENT)] == ["a.txt"]
    assert await code_of(workspaces.read(AGENT, f"{RESERVED_PREFIX}left")) == (
        "workspacePathInvalid"
    )


async def test_writing_onto_a_folder_or_through_a_file_is_refused(workspaces: Workspaces) -> None:
    await workspaces.write(AGENT, "folder/a.txt", b"x")
    assert await code_of(workspaces.write(AGENT, "folder", b"x")) == "workspaceIsFolder"
    assert await code_of(workspaces.write(AGENT, "folder/a.txt/b", b"x")) == "workspaceIsFile"
    assert await code_of(workspaces.read(AGENT, "folder")) == "workspaceIsFolder"


async def test_agent_quota_of_files_and_bytes(tmp_path: Path) -> None:
    limits = WorkspaceLimits(
        agent_files=2, agent_bytes=10, team_files=100, team_bytes=1000, file_bytes=8
    )
    workspaces = Workspaces(tmp_path, limits)
    await workspaces.write(AGENT, "a", b"1234")
    await workspaces.write(AGENT, "b", b"1234")
    assert await code_of(workspaces.write(AGENT, "c", b"1")) == "workspaceAgentFull"
    # Replacing a file adds no file; growing it past the bytes is refused.
    await workspaces.write(AGENT, "a", b"123456")
    assert await code_of(workspaces.write(AGENT, "b", b"12345")) == "workspaceAgentFull"
    assert await code_of(workspaces.write(AGENT, "b", b"123456789")) == "workspaceFileTooLarge"
    # Another agent has its own room, and a full workspace can still shrink.
    await workspaces.write(OTHER, "c", b"1")
    await workspaces.write(AGENT, "a", b"1")
    assert await workspaces.read(AGENT, "b") == b"1234"
    await workspaces.delete(AGENT, "b")
    await workspaces.write(AGENT, "c", b"1")


async def test_team_quota_counts_every_workspace_of_the_team(tmp_path: Path) -> None:
    limits = WorkspaceLimits(
        agent_files=10, agent_bytes=100, team_files=3, team_bytes=12, file_bytes=100
    )
    workspaces = Workspaces(tmp_path, limits)
    await workspaces.write(AGENT, "a", b"1234")
    await workspaces.write(OTHER, "a", b"1234")
    await workspaces.write(SHARED, "a", b"12")
    assert await code_of(workspaces.write(SHARED, "b", b"1")) == "workspaceTeamFull"
    assert await code_of(workspaces.write(AGENT, "a", b"1234567")) == "workspaceTeamFull"
    # Another team is not counted.
    await workspaces.write(WorkspaceRef("team-b", None), "a", b"1234")


async def test_a_fifo_is_refused_without_waiting_for_a_writer(workspaces: Workspaces) -> None:
    await workspaces.write(AGENT, "keep.txt", b"x")
    pipe = workspaces.folder(AGENT).root / "pipe"
    os.mkfifo(pipe)
    try:
        for call in (
            workspaces.read(AGENT, "pipe"),
            workspaces.read_range(AGENT, "pipe", 0, 10),
        ):
            # Opening a FIFO to read waits for a writer: a bounded wait shows it does not.
            assert await code_of(asyncio.wait_for(call, 10)) == "workspaceNotAFile"
    finally:
        # Before the fix a reader hangs in open(); a writer's open lets it go.
        with contextlib.suppress(OSError):
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
    assert await workspaces.read_size(AGENT, "pipe") is None
    assert [e.name for e in await workspaces.list_folder(AGENT)] == ["keep.txt"]


@pytest.mark.parametrize(
    "planted",
    [("workspace",), ("workspace", TEAM), ("workspace", TEAM, "agents")],
    ids=["workspace", "team", "agents"],
)
async def test_a_link_above_the_workspace_root_is_never_followed(
    tmp_path: Path, outside: Path, planted: tuple[str, ...]
) -> None:
    data = tmp_path / "data"
    link = data.joinpath(*planted)
    link.parent.mkdir(parents=True, exist_ok=True)
    # What the link names holds the rest of the way down, with a file at the end.
    rest = ("workspace", TEAM, "agents", "agent-1")[len(planted) :]
    target = outside.joinpath(*rest)
    target.mkdir(parents=True, exist_ok=True)
    (target / "secret.txt").write_text("not yours")
    link.symlink_to(outside, target_is_directory=True)
    workspaces = Workspaces(data, ROOMY)
    for call in (
        workspaces.read(AGENT, "secret.txt"),
        workspaces.write(AGENT, "planted.txt", b"planted"),
        workspaces.list_folder(AGENT),
        workspaces.delete(AGENT, "secret.txt"),
    ):
        assert await code_of(call) == "workspacePathInvalid"
    assert sorted(os.listdir(target)) == ["secret.txt"]
    assert (await workspaces.usage(AGENT)).files == 0


async def test_emptied_folders_go_and_folders_count_toward_the_quota(tmp_path: Path) -> None:
    workspaces = Workspaces(tmp_path, ROOMY)
    for cycle in range(20):
        await workspaces.write(AGENT, f"run-{cycle}/deep/er/out.txt", b"x")
        await workspaces.delete(AGENT, f"run-{cycle}/deep/er/out.txt")
    assert await workspaces.list_folder(AGENT) == []
    usage = await workspaces.usage(AGENT)
    assert (usage.files, usage.folders, usage.bytes) == (0, 0, 0)
    # Deleting a folder removes the folders it leaves empty too, and no further.
    await workspaces.write(AGENT, "a/b/c/d.txt", b"x")
    await workspaces.write(AGENT, "a/e.txt", b"x")
    await workspaces.delete(AGENT, "a/b/c")
    assert [e.name for e in await workspaces.list_folder(AGENT, "a")] == ["e.txt"]

    small = WorkspaceLimits(
        agent_files=3, agent_bytes=100, team_files=100, team_bytes=1000, file_bytes=100
    )
    limited = Workspaces(tmp_path / "small", small)
    await limited.write(AGENT, "a/b/c.txt", b"x")  # two folders and a file
    assert await code_of(limited.write(AGENT, "d.txt", b"x")) == "workspaceAgentFull"
    assert await code_of(limited.write(OTHER, "a/b/c/d.txt", b"x")) == "workspaceAgentFull"
    await limited.write(AGENT, "a/b/c.txt", b"y")  # a replacement adds nothing
    team = WorkspaceLimits(
        agent_files=100, agent_bytes=100, team_files=4, team_bytes=1000, file_bytes=100
    )
    shared = Workspaces(tmp_path / "team", team)
    await shared.write(AGENT, "a/b.txt", b"x")
    await shared.write(SHARED, "c/d.txt", b"x")
    assert await code_of(shared.write(OTHER, "e.txt", b"x")) == "workspaceTeamFull"


async def test_deleting_an_agents_workspace_never_follows_a_link_above_it(
    tmp_path: Path, outside: Path
) -> None:
    data = tmp_path / "data"
    workspaces = Workspaces(data, ROOMY)
    service = WorkspaceService(cast(Any, None), cast(Any, None), workspaces, upload_seconds=60)
    await workspaces.write(OTHER, "mine.txt", b"x")
    await service.remove_agent_workspace(TEAM, "agent-2")
    assert await workspaces.list_folder(OTHER) == []
    # agents/ swapped for a link to a folder that holds an agent-1 of its own.
    (outside / "agent-1").mkdir()
    (outside / "agent-1" / "kept.txt").write_text("not yours")
    agents = data / "workspace" / TEAM / "agents"
    agents.rename(tmp_path / "agents-before")
    agents.symlink_to(outside, target_is_directory=True)
    await service.remove_agent_workspace(TEAM, "agent-1")
    assert (outside / "agent-1" / "kept.txt").read_text() == "not yours"


async def test_a_start_removes_what_a_crashed_run_left_and_nothing_else(
    tmp_path: Path, outside: Path
) -> None:
    data = tmp_path / "data"
    workspaces = Workspaces(data, ROOMY)
    service = WorkspaceService(cast(Any, None), cast(Any, None), workspaces, upload_seconds=60)
    await workspaces.write(AGENT, "box/kept.txt", b"kept")
    box = workspaces.folder(AGENT).root / "box"
    left = box / f"{RESERVED_PREFIX}0123456789abcdef"
    left.write_bytes(b"a write the crash cut short")
    os.utime(left, (1_000_000, 1_000_000))
    (outside / f"{RESERVED_PREFIX}theirs").write_text("not yours")
    (box / "link").symlink_to(outside, target_is_directory=True)
    staged = data / "workspace-uploads" / TEAM / "upload-1"
    staged.parent.mkdir(parents=True)
    staged.write_bytes(b"half an upload")
    await service.recover()
    assert sorted(os.listdir(box)) == ["kept.txt", "link"]
    assert (outside / f"{RESERVED_PREFIX}theirs").read_text() == "not yours"
    assert not staged.exists()
    # A write of the new run, under way as the sweep runs, keeps its temporary file.
    fresh = box / f"{RESERVED_PREFIX}fedcba9876543210"
    fresh.write_bytes(b"now")
    assert workspaces.sweep(before=os.stat(fresh).st_mtime) == 0
    assert fresh.exists()


async def test_usage_and_listing_while_files_are_written_and_deleted(tmp_path: Path) -> None:
    # Unlocked readers race the writer: a temporary file listed, then renamed away, or a
    # file deleted between the listing and its stat, must be skipped, never an error.
    workspaces = Workspaces(tmp_path / "data", ROOMY)
    # Many files make the gap between reading a folder and the last stat a wide one.
    for number in range(60):
        await workspaces.write(AGENT, f"box/kept-{number}.txt", b"kept")
    writing = True

    async def writer() -> None:
        nonlocal writing
        try:
            for cycle in range(150):
                path = f"box/churn-{cycle % 5}.txt"
                await workspaces.write(AGENT, path, b"x" * cycle)
                if cycle % 3 == 0:
                    await workspaces.delete(AGENT, path)
        finally:
            writing = False

    async def reader() -> int:
        rounds = 0
        while writing or rounds == 0:
            usage = await workspaces.usage(AGENT)
            assert usage.files >= 60
            listed = [e.name for e in await workspaces.list_folder(AGENT, "box")]
            assert not [name for name in listed if name.startswith(RESERVED_PREFIX)]
            rounds += 1
        return rounds

    _, rounds = await asyncio.gather(writer(), reader())
    assert rounds > 0


async def test_write_all_checks_the_quotas_for_all_files_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = WorkspaceLimits(
        agent_files=4, agent_bytes=10, team_files=100, team_bytes=1000, file_bytes=10
    )
    workspaces = Workspaces(tmp_path, limits)
    # Two folders and two files: a new folder two files share counts once.
    written = await workspaces.write_all(AGENT, [("a/b/1.txt", b"1234"), ("a/b/2.txt", b"12")])
    assert [(w.path, w.created) for w in written] == [("a/b/1.txt", True), ("a/b/2.txt", True)]
    # Refused for a file too many, or bytes too many: the write that fits is not made either.
    for files in (
        [("a/b/1.txt", b"12"), ("c.txt", b"1")],
        [("a/b/1.txt", b"4321"), ("a/b/2.txt", b"1234567")],
    ):
        assert await code_of(workspaces.write_all(AGENT, files)) == "workspaceAgentFull"
    assert await workspaces.read(AGENT, "a/b/1.txt") == b"1234"
    usage = await workspaces.usage(AGENT)
    assert (usage.files, usage.folders, usage.bytes) == (2, 2, 6)
    # A path named twice is one file, written last with the later bytes.
    again = await workspaces.write_all(AGENT, [("a/b/1.txt", b"1"), ("a/b/1.txt", b"123")])
    assert [w.created for w in again] == [False, False]
    assert await workspaces.read(AGENT, "a/b/1.txt") == b"123"

    # A write that fails after others were written takes back the files (and folders) the
    # call created; a file it replaced keeps its new bytes.
    await workspaces.delete(AGENT, "a")
    await workspaces.write(AGENT, "old.txt", b"old")
    real_replace = ConfinedFolder.replace
    replaced: list[str] = []

    def fail_the_third(folder: int, temporary: str, name: str) -> None:
        replaced.append(name)
        if len(replaced) == 3:
            raise OSError("the disk went away")
        real_replace(folder, temporary, name)

    monkeypatch.setattr(ConfinedFolder, "replace", staticmethod(fail_the_third))
    files = [("new/x.txt", b"x"), ("old.txt", b"old 2"), ("y.txt", b"y")]
    with pytest.raises(OSError, match="disk went away"):
        await workspaces.write_all(AGENT, files)
    monkeypatch.undo()
    assert [e.name for e in await workspaces.list_folder(AGENT)] == ["old.txt"]
    assert await workspaces.read(AGENT, "old.txt") == b"old 2"
