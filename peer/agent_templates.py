"""``crewhost-peer agents``: the team's agents (``list``), and agents as portable templates
(``export``, ``import``).

``export`` writes an agent's ``.crewhost-agent.zip`` (its memories and workspace files only
with ``--memories`` and ``--workspace``); the host refuses an export holding key-like text
and names where. ``import`` sends a template in chunks, prints what it brings and needs (and
with ``--update`` what would change in that agent), asks before going on unless ``--yes``,
and maps the template's provider and MCP servers to the team's: those the host suggests,
or those given with ``--provider`` and ``--mcp NAME=SERVER``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from peer.chat import find_agent
from peer.connection import HostConnection

Table = Callable[[Sequence[str], Sequence[Sequence[str]]], None]


class TemplateChoiceMissing(Exception):
    """The template needs something the team has no match for, and no option chose one."""


def add_agents_parser(commands: Any) -> tuple[argparse.ArgumentParser, list[Any]]:
    """The ``agents`` command and its actions (``agents`` alone lists); answers the command
    and its actions (which take --team, --host)."""
    agents = commands.add_parser(
        "agents",
        help="the team's agents: list, export, import",
        description="The team's agents. `agents` alone lists them. Owners and admins export "
        "an agent as a .crewhost-agent.zip and import one into any team (or update an agent "
        "from a newer file).",
    )
    actions = agents.add_subparsers(dest="agents_command", metavar="ACTION")
    listed = actions.add_parser("list", help="the team's agents (what `agents` alone prints)")
    export = actions.add_parser("export", help="write an agent's .crewhost-agent.zip")
    export.add_argument("agent", metavar="AGENT", help="the agent's name or id")
    export.add_argument("--memories", action="store_true", help="include the team's memories")
    export.add_argument("--workspace", action="store_true", help="include its workspace files")
    export.add_argument("-o", "--output", type=Path, help="the file to write (default: here)")
    imported = actions.add_parser(
        "import", help="preview a .crewhost-agent.zip, then import it (or update an agent)"
    )
    imported.add_argument("file", metavar="FILE", type=Path)
    imported.add_argument("--update", metavar="AGENT", help="update this agent instead")
    imported.add_argument("--yes", action="store_true", help="do not ask after the preview")
    imported.add_argument("--provider", help="the team's provider to use (default: the match)")
    imported.add_argument("--model", help="the model to use (default: the template's)")
    imported.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="NAME=SERVER",
        help="map the template's MCP server NAME to the team's SERVER (name or id; '-': none)",
    )
    imported.add_argument(
        "--replace-skills",
        action="store_true",
        help="replace the team's skills that differ from the template's (default: keep them)",
    )
    return agents, [listed, export, imported]


async def export_template(
    connection: HostConnection, agent_id: str, *, memories: bool = False, workspace: bool = False
) -> tuple[str, bytes]:
    """An agent's template: its file name and bytes, downloaded in chunks."""
    ready = await connection.call(
        "agent-templates-v1/export",
        {"agentId": agent_id, "includeMemories": memories, "includeWorkspace": workspace},
    )
    data = bytearray()
    while True:
        chunk = await connection.call(
            "agent-templates-v1/download", {"downloadId": ready["downloadId"], "offset": len(data)}
        )
        data += base64.b64decode(chunk["data"])
        if chunk["eof"]:
            return str(ready["fileName"]), bytes(data)


async def upload_template(connection: HostConnection, data: bytes) -> str:
    """Send a template in chunks; its upload id, for preview, import and update."""
    started = await connection.call("agent-templates-v1/upload_start", {"size": len(data)})
    step = int(started["chunkBytes"])
    for offset in range(0, len(data), step):
        await connection.call(
            "agent-templates-v1/upload_chunk",
            {
                "uploadId": started["uploadId"],
                "offset": offset,
                "data": base64.b64encode(data[offset : offset + step]).decode(),
            },
        )
    return str(started["uploadId"])


def choices_of(
    preview: dict[str, Any],
    *,
    provider: str | None = None,
    model: str | None = None,
    mcp: Sequence[str] = (),
    servers: Sequence[dict[str, Any]] = (),
    replace_skills: bool = False,
) -> dict[str, Any]:
    """The import's mapping: the host's suggestions, overridden by the options given."""
    chosen = provider or preview["provider"]["match"]
    if chosen is None:
        raise TemplateChoiceMissing(
            f"the team has no provider like {preview['provider']['name']!r}: add one, or "
            "choose one with --provider"
        )
    by_name = {s["name"]: s["id"] for s in servers}
    mapping: dict[str, str | None] = {m["name"]: m["match"] for m in preview["mcpServers"]}
    for given in mcp:
        name, _, server = given.partition("=")
        if name not in mapping:
            raise TemplateChoiceMissing(f"the template uses no MCP server named {name!r}")
        mapping[name] = None if server in ("", "-") else by_name.get(server, server)
    args: dict[str, Any] = {
        "provider": by_name.get(chosen, chosen),
        "mcpServers": mapping,
        "skills": "replace" if replace_skills else "keep",
    }
    if model is not None:
        args["model"] = model
    return args


def print_preview(preview: dict[str, Any], table: Table) -> None:
    """What the template brings, needs and clashes with; with an agent, what would change."""
    provider = preview["provider"]
    print(f"agent {preview['name']} (content hash {preview['contentHash'][:16]})")
    model = provider["model"] or "the provider's default"
    match = provider["match"] or "none: choose one with --provider"
    print(f"needs a provider like {provider['name']} ({provider['kind']}) with {model}")
    print(f"  the team's match: {match}")
    rows = [["skill", s["name"], s["status"]] for s in preview["skills"]]
    rows += [["mcp server", m["name"], m["match"] or "no match"] for m in preview["mcpServers"]]
    rows += [
        ["routine", r["name"], f"{r['schedule']}{'' if r['enabled'] else ' (off)'}"]
        for r in preview["routines"]
    ]
    rows.append(["memories", str(preview["memories"]), ""])
    rows.append(
        ["workspace", f"{preview['workspaceFiles']} files", f"{preview['workspaceBytes']} bytes"]
    )
    table(["BRINGS", "NAME", "STATE"], rows)
    for conflict in preview["conflicts"]:
        print(f"conflict: {conflict}")
    for change in preview.get("changes") or []:
        print(f"change {change['what']}: {change['before']} -> {change['after']}")
        if change["diff"]:
            print(change["diff"].rstrip("\n"))


async def _confirm(question: str) -> bool:
    print(question, end=" ", flush=True)
    answer = await asyncio.to_thread(sys.stdin.readline)
    return answer.strip().lower() in ("y", "yes")


async def agents_command(connection: HostConnection, args: argparse.Namespace, table: Table) -> int:
    """Run ``agents export`` or ``agents import``; its exit status."""
    if args.agents_command == "export":
        exported = await find_agent(connection, args.agent)
        name, data = await export_template(
            connection, exported["id"], memories=args.memories, workspace=args.workspace
        )
        target = args.output or Path(name)
        await asyncio.to_thread(target.write_bytes, data)
        print(f"wrote {target} ({len(data)} bytes)")
        return 0
    data = await asyncio.to_thread(args.file.read_bytes)
    upload_id = await upload_template(connection, data)
    agent: dict[str, Any] | None = None
    if args.update is not None:
        agent = await find_agent(connection, args.update)
    ask: dict[str, Any] = {"uploadId": upload_id}
    if agent is not None:
        ask["agentId"] = agent["id"]
    preview = await connection.call("agent-templates-v1/preview", ask)
    print_preview(preview, table)
    servers = (await connection.call("mcp-servers-v1/list"))["servers"] if args.mcp else []
    try:
        choices = choices_of(
            preview,
            provider=args.provider,
            model=args.model,
            mcp=args.mcp,
            servers=servers,
            replace_skills=args.replace_skills,
        )
    except TemplateChoiceMissing as exc:
        print(f"crewhost-peer: {exc}", file=sys.stderr)
        return 1
    doing = "update " + agent["name"] if agent is not None else "import it"
    if not args.yes and not await _confirm(f"{doing}? [y/N]"):
        print("nothing changed")
        return 1
    if agent is None:
        done = await connection.call(
            "agent-templates-v1/import", {"uploadId": upload_id, **choices}
        )
        print(f"imported {done['name']} ({done['agentId']})")
    else:
        done = await connection.call(
            "agent-templates-v1/update", {"uploadId": upload_id, "agentId": agent["id"], **choices}
        )
        print(f"updated {done['name']} ({done['agentId']})")
    return 0
