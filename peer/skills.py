"""``crewhost-peer skills``: the team's skills (list, show, push, pull, enable).

``push`` takes a skill's folder or a ``.zip`` of one and sends it as a ``.zip`` in chunks;
the host checks it whole before it writes anything. ``pull`` writes the skill's ``.zip``
(one folder named after the skill, ``SKILL.md`` at its root), or with ``--extract`` its
folder, which ``push`` takes back.
"""

from __future__ import annotations

import argparse
import base64
import io
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from peer.chat import find_agent
from peer.connection import HostConnection

# A folder's files a push leaves out: what tools and systems leave beside the files.
_SKIPPED = frozenset({".DS_Store", "Thumbs.db", ".git"})


def add_skills_parser(commands: Any) -> list[argparse.ArgumentParser]:
    """The ``skills`` command and its actions; answers the actions (which take --team, --host)."""
    skills = commands.add_parser(
        "skills",
        help="the team's skills: list, show, push, pull, enable",
        description="Skills in the open Agent Skills format (a folder with SKILL.md). "
        "Members list, show and pull them; owners and admins push them and choose each "
        "agent's skills.",
    )
    actions = skills.add_subparsers(dest="skills_command", required=True, metavar="ACTION")
    listed = actions.add_parser("list", help="the team's skills, drafts included")
    show = actions.add_parser("show", help="a skill's SKILL.md, files and versions")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--version", type=int, help="a version (default: the newest)")
    push = actions.add_parser(
        "push", help="send a skill's folder or .zip (a new version with --replace)"
    )
    push.add_argument("source", metavar="FOLDER_OR_ZIP", type=Path)
    push.add_argument(
        "--replace", action="store_true", help="a new version of the team's skill of that name"
    )
    pull = actions.add_parser("pull", help="write a skill's .zip (or its folder with --extract)")
    pull.add_argument("name", metavar="NAME")
    pull.add_argument("--version", type=int, help="a version (default: the newest)")
    pull.add_argument("--out", type=Path, default=Path(), help="where to write it (here)")
    pull.add_argument("--extract", action="store_true", help="write the folder, not the .zip")
    enable = actions.add_parser("enable", help="give an agent a skill (or --off to take it)")
    enable.add_argument("name", metavar="SKILL")
    enable.add_argument("--agent", required=True, help="the agent's name or id")
    enable.add_argument("--off", action="store_true", help="take the skill away instead")
    return [listed, show, push, pull, enable]


def archive_of(source: Path) -> bytes:
    """The ``.zip`` to send for ``source``: the file itself, or a folder's files under one
    folder of its name (links and hidden tool folders left out)."""
    if source.is_file():
        return source.read_bytes()
    if not source.is_dir():
        raise FileNotFoundError(f"no folder or file at {source}")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made:
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            if path.is_symlink() or not path.is_file() or _SKIPPED & set(relative.parts):
                continue
            made.write(path, f"{source.resolve().name}/{relative.as_posix()}")
    return out.getvalue()


async def push_archive(
    connection: HostConnection, data: bytes, *, replace: bool = False
) -> dict[str, Any]:
    """Send a skill's ``.zip`` in chunks; the skill the host made of it."""
    started = await connection.call("skills-v1/upload_start", {"size": len(data)})
    step = int(started["chunkBytes"])
    for offset in range(0, len(data), step):
        await connection.call(
            "skills-v1/upload_chunk",
            {
                "uploadId": started["uploadId"],
                "offset": offset,
                "data": base64.b64encode(data[offset : offset + step]).decode(),
            },
        )
    return dict(
        await connection.call(
            "skills-v1/upload_finish", {"uploadId": started["uploadId"], "replace": replace}
        )
    )


async def pull_archive(connection: HostConnection, name: str, version: int | None = None) -> bytes:
    """A skill's ``.zip``, in chunks."""
    data = bytearray()
    while True:
        args: dict[str, Any] = {"name": name, "offset": len(data)}
        if version is not None:
            args["version"] = version
        chunk = await connection.call("skills-v1/download", args)
        data += base64.b64decode(chunk["data"])
        if chunk["eof"]:
            return bytes(data)


def _extract(data: bytes, out: Path) -> Path:
    """The archive's one folder under ``out`` (the host wrote it: plain relative names)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        for name in names:
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(name))
    return out / names[0].split("/", 1)[0]


async def skills_command(
    connection: HostConnection,
    args: argparse.Namespace,
    table: Callable[[Sequence[str], Sequence[Sequence[str]]], None],
) -> int:
    """Run one ``skills`` action; its exit status."""
    command = args.skills_command
    if command == "list":
        skills = (await connection.call("skills-v1/list"))["skills"]
        table(
            ["NAME", "STATE", "VERSION", "AGENTS", "DESCRIPTION"],
            [
                [s["name"], s["state"], str(s["version"]), str(len(s["agents"])), s["description"]]
                for s in skills
            ],
        )
    elif command == "show":
        await _show(connection, args.name, args.version, table)
    elif command == "push":
        skill = await push_archive(connection, archive_of(args.source), replace=args.replace)
        print(f"pushed {skill['name']} version {skill['version']}")
    elif command == "pull":
        data = await pull_archive(connection, args.name, args.version)
        args.out.mkdir(parents=True, exist_ok=True)
        if args.extract:
            print(f"wrote {_extract(data, args.out)}")
        else:
            target = args.out / f"{args.name}.zip"
            target.write_bytes(data)
            print(f"wrote {target}")
    else:
        agent = await find_agent(connection, args.agent)
        await connection.call(
            "skills-v1/enable",
            {"name": args.name, "agentId": agent["id"], "enabled": not args.off},
        )
        print(f"{args.name} {'taken from' if args.off else 'given to'} {agent['name']}")
    return 0


async def _show(
    connection: HostConnection,
    name: str,
    version: int | None,
    table: Callable[[Sequence[str], Sequence[Sequence[str]]], None],
) -> None:
    args: dict[str, Any] = {"name": name}
    if version is not None:
        args["version"] = version
    got = await connection.call("skills-v1/get", args)
    skill = got["skill"]
    print(f"{skill['name']} ({skill['state']}, version {got['version']} of {skill['version']})")
    print(got["skillMd"].rstrip("\n"))
    print()
    table(["FILE", "BYTES"], [[f["path"], str(f["size"])] for f in got["files"]])
    print()
    versions = (await connection.call("skills-v1/versions", {"name": name}))["versions"]
    table(
        ["VERSION", "CHANGE", "FILES", "DESCRIPTION"],
        [[str(v["version"]), v["change"], str(v["files"]), v["description"]] for v in versions],
    )
