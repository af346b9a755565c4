"""A confined folder: every file call walks from the data folder one part at a time.

Each folder on the way, the workspace's own parents included (``workspace/<team>/agents``),
is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one before (``dir_fd``), and
the file itself with ``O_NOFOLLOW | O_NONBLOCK`` and checked to be a regular file, so a
symbolic link planted anywhere (by a member's upload, another process or a race) is
never followed, and a FIFO or device never holds a call up: a call that meets one fails.
Writes go to a temporary file in the same folder, are synced, and replace the old file by
``rename``, so a crash leaves the old file or the new, never half of one. A delete
removes the folders it leaves empty. The calls block; the workspace service runs them
off the event loop.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from server.common.errors import Conflict, InvalidArgument, NotFound
from server.host.workspace.paths import RESERVED_PREFIX, display_path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_MODE = 0o600
_FOLDER_MODE = 0o700

EntryKind = Literal["file", "folder"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One file or folder of a listing."""

    name: str
    kind: EntryKind
    size: int
    modified_at: float


@dataclass(frozen=True, slots=True)
class Usage:
    """How many files and folders a folder holds, and the files' bytes (the temporary
    files of writes left out)."""

    files: int
    bytes: int
    folders: int = 0

    @property
    def entries(self) -> int:
        """Files and folders: what a quota of files counts."""
        return self.files + self.folders

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.files + other.files, self.bytes + other.bytes, self.folders + other.folders
        )


def _not_found(parts: tuple[str, ...]) -> NotFound:
    return NotFound(f"no file or folder {display_path(parts)!r}", code="workspaceNotFound")


def _not_a_file(parts: tuple[str, ...]) -> InvalidArgument:
    return InvalidArgument(
        f"{display_path(parts)!r} is not a regular file (a pipe, device or socket), "
        "which a workspace never opens",
        code="workspaceNotAFile",
        field="path",
    )


def _link_met(parts: tuple[str, ...]) -> InvalidArgument:
    return InvalidArgument(
        f"{display_path(parts)!r} goes through a link, which a workspace never follows",
        code="workspacePathInvalid",
        field="path",
    )


class ConfinedFolder:
    """File calls on paths inside the folder ``below`` names under ``base`` (parts checked
    by ``workspace_parts``). ``base`` is the data folder, trusted as it is; every folder
    from there down is opened without following a link."""

    def __init__(self, base: Path, below: tuple[str, ...]) -> None:
        self.base = base
        self.below = below

    @property
    def root(self) -> Path:
        return self.base.joinpath(*self.below)

    # -- walking --------------------------------------------------------------------------

    def _open_root(self, *, create: bool) -> int:
        if create:
            self.base.mkdir(mode=_FOLDER_MODE, parents=True, exist_ok=True)
        try:
            fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise _not_found(()) from None
        try:
            for part in self.below:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, _FOLDER_MODE, dir_fd=fd)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    raise _not_found(()) from None
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise _link_met(()) from None
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def _folder(self, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int]:
        """A descriptor of the folder ``parts`` names, every step refusing links."""
        fd = self._open_root(create=create)
        try:
            for depth, part in enumerate(parts):
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, _FOLDER_MODE, dir_fd=fd)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    raise _not_found(parts[: depth + 1]) from None
                except OSError as exc:
                    raise self._why(fd, part, parts[: depth + 1], exc) from None
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    @staticmethod
    def _why(fd: int, name: str, parts: tuple[str, ...], exc: OSError) -> Exception:
        """What a refused open means: a link, a file where a folder was named, or neither."""
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return _not_found(parts)
        if stat.S_ISLNK(mode):
            return _link_met(parts)
        if exc.errno == errno.ENOTDIR or not stat.S_ISDIR(mode):
            return Conflict(f"{display_path(parts)!r} is a file", code="workspaceIsFile")
        return exc

    # -- files ----------------------------------------------------------------------------

    def read(self, parts: tuple[str, ...], *, max_bytes: int) -> bytes:
        """The whole file; ``workspaceFileTooLarge`` past ``max_bytes``."""
        with self.open_file(parts) as (fd, size):
            if size > max_bytes:
                raise InvalidArgument(
                    f"{display_path(parts)!r} is larger than {max_bytes} bytes",
                    code="workspaceFileTooLarge",
                )
            return self._read_fd(fd, size)

    def read_range(self, parts: tuple[str, ...], offset: int, length: int) -> tuple[bytes, int]:
        """``length`` bytes from ``offset`` and the file's size."""
        with self.open_file(parts) as (fd, size):
            return os.pread(fd, length, offset), size

    @staticmethod
    def _read_fd(fd: int, size: int) -> bytes:
        chunks, got = [], 0
        while got < size:
            chunk = os.read(fd, min(size - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    @contextlib.contextmanager
    def open_file(self, parts: tuple[str, ...]) -> Iterator[tuple[int, int]]:
        """A descriptor of the regular file ``parts`` names, and its size."""
        with self._folder(parts[:-1]) as folder:
            name = parts[-1]
            try:
                self._check_file(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode, parts)
                # Non-blocking: a FIFO swapped in after the check still cannot hold the open.
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                fd = os.open(name, flags, dir_fd=folder)
            except FileNotFoundError:
                raise _not_found(parts) from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise _link_met(parts) from None
                if exc.errno == errno.ENXIO:  # a socket, or a FIFO's other end
                    raise _not_a_file(parts) from None
                raise
            try:
                info = os.fstat(fd)
                self._check_file(info.st_mode, parts)
                yield fd, info.st_size
            finally:
                os.close(fd)

    @staticmethod
    def _check_file(mode: int, parts: tuple[str, ...]) -> None:
        if stat.S_ISDIR(mode):
            raise Conflict(f"{display_path(parts)!r} is a folder", code="workspaceIsFolder")
        if stat.S_ISLNK(mode):
            raise _link_met(parts)
        if not stat.S_ISREG(mode):
            raise _not_a_file(parts)

    def size_of(self, parts: tuple[str, ...]) -> int | None:
        """The size of the file ``parts`` names; None when there is none, or only a link
        that a write would replace."""
        try:
            with self._folder(parts[:-1]) as folder:
                info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except (NotFound, FileNotFoundError):
            return None
        return info.st_size if stat.S_ISREG(info.st_mode) else None

    def write(self, parts: tuple[str, ...], data: bytes) -> None:
        """Replace (or create) the file atomically: temporary file, fsync, rename, fsync."""
        with self._folder(parts[:-1], create=True) as folder:
            name = parts[-1]
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                    raise Conflict(f"{display_path(parts)!r} is a folder", code="workspaceIsFolder")
            temporary = f"{RESERVED_PREFIX}{secrets.token_hex(8)}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temporary, flags, _FILE_MODE, dir_fd=folder)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                self.replace(folder, temporary, name)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise
            os.fsync(folder)

    @staticmethod
    def replace(folder: int, temporary: str, name: str) -> None:
        """The last step of a write: the synced temporary file takes the name. (A test
        stops a write here to show that a crash before it leaves the old file.)"""
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)

    def delete(self, parts: tuple[str, ...]) -> EntryKind:
        """Delete the file, or the folder and all in it (links inside are removed, not
        followed), and then the folders above it that this left empty."""
        with self._folder(parts[:-1]) as folder:
            name = parts[-1]
            try:
                mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            except FileNotFoundError:
                raise _not_found(parts) from None
            kind: EntryKind = "file"
            if stat.S_ISDIR(mode):
                shutil.rmtree(name, dir_fd=folder)
                kind = "folder"
            else:
                os.unlink(name, dir_fd=folder)
        self._remove_emptied(parts[:-1])
        return kind

    def _remove_emptied(self, parts: tuple[str, ...]) -> None:
        """Removes the folder ``parts`` names if it is empty, then its parent, and so on up
        to (not including) the root: an empty folder left behind still counts."""
        while parts:
            with self._folder(parts[:-1]) as parent:
                try:
                    os.rmdir(parts[-1], dir_fd=parent)
                except OSError:
                    return  # not empty (or no longer there)
            parts = parts[:-1]

    def folders_missing(self, parts: tuple[str, ...]) -> int:
        """How many of the folders ``parts`` names a write there would create."""
        try:
            fd = self._open_root(create=False)
        except NotFound:
            return len(parts)
        try:
            for depth, part in enumerate(parts):
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    return len(parts) - depth
                except OSError as exc:
                    raise self._why(fd, part, parts[: depth + 1], exc) from None
                os.close(fd)
                fd = child
            return 0
        finally:
            os.close(fd)

    def list_folder(self, parts: tuple[str, ...]) -> list[Entry]:
        """The files and folders in the folder ``parts`` names, by name; links and the
        temporary files of writes are left out, and so is a file deleted while it is read."""
        with self._folder(parts) as folder:
            entries = []
            with os.scandir(folder) as found:
                for item in found:
                    if item.name.startswith(RESERVED_PREFIX):
                        continue
                    try:
                        info = item.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # deleted since the folder was read: the listing is unlocked
                    if stat.S_ISDIR(info.st_mode):
                        entries.append(Entry(item.name, "folder", 0, info.st_mtime))
                    elif stat.S_ISREG(info.st_mode):
                        entries.append(Entry(item.name, "file", info.st_size, info.st_mtime))
        return sorted(entries, key=lambda e: (e.kind != "folder", e.name))

    def usage(self) -> Usage:
        """Files, their bytes, and folders under the root; links neither followed nor
        counted, nor the temporary files of writes. A root that is missing, or reached
        through a link, holds nothing. It runs unlocked, beside writes and deletes: a
        file that goes between reading its folder and its ``stat`` is not counted."""
        try:
            root = self._open_root(create=False)
        except (NotFound, InvalidArgument):
            return Usage(0, 0)
        files = size = folders = 0
        try:
            for _, subfolders, names, fd in os.fwalk(".", dir_fd=root, follow_symlinks=False):
                folders += len(subfolders)
                for name in names:
                    if name.startswith(RESERVED_PREFIX):
                        continue  # a write under way: its file counts once it has its name
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # deleted since the folder was read: usage is unlocked
                    if stat.S_ISREG(info.st_mode):
                        files += 1
                        size += info.st_size
        finally:
            os.close(root)
        return Usage(files, size, folders)

    def remove(self) -> None:
        """Deletes the root and all in it; a link in its place is removed, not followed,
        and a root reached through a link above is left alone."""
        parent = ConfinedFolder(self.base, self.below[:-1])
        try:
            fd = parent._open_root(create=False)
        except (NotFound, InvalidArgument):
            return
        try:
            name = self.below[-1]
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                return
            if stat.S_ISDIR(mode):
                shutil.rmtree(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)

    def subfolders(self) -> list[str]:
        """The names of the folders directly under the root (links left out)."""
        try:
            return [e.name for e in self.list_folder(()) if e.kind == "folder"]
        except (NotFound, InvalidArgument):
            return []
