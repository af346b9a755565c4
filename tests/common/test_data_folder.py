"""The data folder walk that takes group and other permissions away."""

from __future__ import annotations

import stat
from pathlib import Path

from server.common.data_folder import create_private_file, private_folder, remove_shared_permissions


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_loose_files_and_folders_become_private(tmp_path: Path) -> None:
    root = tmp_path / "data"
    team = root / "browser" / "team-a"
    team.mkdir(parents=True)
    loose_files = [root / "crewhost.db", root / "crewhost.db-wal", team / "tabs.json"]
    for path in loose_files:
        path.write_text("secret")
        path.chmod(0o644)
    executable = root / "helper"
    executable.write_text("")
    executable.chmod(0o775)
    already = root / "identity.key"
    already.write_text("key")
    already.chmod(0o600)
    for folder in (root, root / "browser", team):
        folder.chmod(0o755)
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    outside.chmod(0o644)
    (root / "link").symlink_to(outside)

    assert remove_shared_permissions(root) == 7

    assert [mode(p) for p in loose_files] == [0o600] * 3
    assert mode(executable) == 0o700
    assert mode(already) == 0o600
    assert [mode(f) for f in (root, root / "browser", team)] == [0o700] * 3
    assert mode(outside) == 0o644  # a link is neither followed nor changed
    assert remove_shared_permissions(root) == 0


def test_a_missing_folder_is_nothing_to_fix(tmp_path: Path) -> None:
    assert remove_shared_permissions(tmp_path / "absent") == 0


def test_created_folders_and_files_are_private(tmp_path: Path) -> None:
    folder = private_folder(tmp_path / "data")
    create_private_file(folder / "crewhost.db")
    create_private_file(folder / "crewhost.db")  # a second call leaves the file as it is
    assert (mode(folder), mode(folder / "crewhost.db")) == (0o700, 0o600)
