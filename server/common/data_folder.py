"""The data folder is private: the folder 0700 and every file in it 0600.

It holds the hub's ticket-signing key, password and session hashes, the host's
identity key and every tab's address, so nobody but the account running Crewhost
may read it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077
FOLDER_MODE = 0o700
FILE_MODE = 0o600
_SHARED_BITS = 0o077


def keep_new_files_private() -> None:
    """From now on this process (and its children, Chromium too) creates files for its owner only.

    The umask is process-wide: call this from the command-line entry points, never from a
    library or a test that shares its process.
    """
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)


def private_folder(path: Path) -> Path:
    """``path`` as a folder, created 0700 if missing (missing parents follow the umask)."""
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    return path


def create_private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 unless it exists, so whatever fills it inherits no more."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))


def remove_shared_permissions(root: Path) -> int:
    """Take group and other permissions off ``root`` and everything under it.

    Links inside it are neither followed nor changed. Answers how many entries changed.
    """
    if not root.is_dir():
        return 0
    top = root.resolve()  # a data folder that is itself a link means the folder it names
    fixed = _make_private(str(top))
    for folder, folders, files in os.walk(top):
        for name in (*folders, *files):
            fixed += _make_private(os.path.join(folder, name))
    return fixed


def _make_private(path: str) -> int:
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode) or not stat.S_IMODE(mode) & _SHARED_BITS:
            return 0
        os.chmod(path, stat.S_IMODE(mode) & ~_SHARED_BITS)
    except FileNotFoundError:
        return 0  # removed while we walked
    except OSError as exc:
        log.warning("cannot make a data folder entry private: %s", exc.strerror)
        return 0
    return 1


def secure_data_folder(data_dir: Path) -> None:
    """At the start of a command: new files private, and existing ones made so."""
    keep_new_files_private()
    fixed = remove_shared_permissions(data_dir)
    if fixed:
        log.warning(
            "made %d files and folders in the data folder private to this user",
            fixed,
            extra={"fixed": fixed},
        )
