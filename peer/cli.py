"""``crewhost-peer``: sign in to a hub and talk to its hosts from a terminal."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import io
import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from peer.access_tokens import NoHost, tokens_command
from peer.agent_templates import add_agents_parser, agents_command
from peer.chat import AgentNotFound, StdinLines, TerminalChat, find_agent
from peer.connection import (
    AccessRevoked,
    HostConnection,
    HostSignatureInvalid,
    TeamApiCallError,
    connect_to_host,
)
from peer.egress import share_egress
from peer.hub_client import HubClient, HubError
from peer.known_hosts import HostKeyChanged, KnownHosts, KnownHostsUnreadable
from peer.live_view import LiveView, ViewClosed, open_view
from peer.mcp_servers import McpServerNotFound, add_mcp_parser, mcp_command
from peer.skills import add_skills_parser, skills_command
from peer.teams import TeamNotFound, find_team
from peer.usage import add_usage_parser, usage_command
from server.common.tasks import wait_set

TEAM_HELP = "team name (any case) or id (default: your first team)"
CALL_DESCRIPTION = (
    "Call one Team API route and print its result as JSON. JSON is the route's arguments, "
    'one JSON object (quote it for the shell: \'{"tabId": "..."}\'); without it, {}. '
    "Exit status: 0 on success; 1 when the hub or the host refuses (its error code is "
    "printed); 2 when JSON is not a JSON object (a usage error, nothing is sent); 3 when "
    "the host's key differs from the pinned one."
)
ROUTINE_CREATE_DESCRIPTION = (
    "Create a routine: the agent runs MESSAGE with nobody in the chat on its schedule, "
    "one of --cron with --tz, --every or --at. Nothing runs more often than once a minute. "
    "Prints the schedule in words and its next three times."
)
WATCH_DESCRIPTION = (
    "Watch a tab live for a while and print the frames received, frames per second and "
    "bytes per frame. `crewhost-peer call browser-control-v1/list_tabs` lists the tabs "
    "and their ids. A page sends a frame only when what it shows changes, so a still page "
    "sends few or none: a low frame rate there is not a fault. It ends early, with exit "
    "status 1 and the reason, when the host ends the connection (the member was removed "
    "or signed out, the role changed, the host went)."
)
# How long a view that closed without a word waits for its connection to say why.
VIEW_GONE_SECONDS = 5.0
STILL_PAGE_NOTE = (
    "note: a page sends frames only when it changes, so a still page sends few or none; "
    "that is not a fault"
)


# What the config holds once signed in; ``load`` refuses a config without one of them.
CONFIG_KEYS = ("hub", "token", "account_id")


class PeerConfig:
    """The peer's own folder: the hub, bearer token and account (0600), and known host keys."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "config.json"
        self.known_hosts = KnownHosts(folder / "known_hosts.json")

    @classmethod
    def default(cls) -> PeerConfig:
        home = os.environ.get("CREWHOST_PEER_HOME")
        return cls(Path(home) if home else Path.home() / ".config" / "crewhost-peer")

    def load(self) -> dict[str, str]:
        if not self.file.exists():
            raise UsageError("not signed in: run `crewhost-peer login --hub URL --email EMAIL`")
        try:
            values = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise self._unreadable(str(exc)) from exc
        if not isinstance(values, dict) or not all(
            isinstance(values.get(key), str) for key in CONFIG_KEYS
        ):
            raise self._unreadable(f"not an object with {', '.join(CONFIG_KEYS)}")
        return dict(values)

    def _unreadable(self, problem: str) -> UsageError:
        return UsageError(
            f"the config at {self.file.absolute()} is unreadable ({problem}): run "
            "`crewhost-peer login --hub URL --email EMAIL` again"
        )

    def save(self, values: dict[str, str]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if hasattr(os, "fchmod"):  # a config made earlier with wider permissions is narrowed
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(values, handle)

    def forget(self) -> None:
        self.file.unlink(missing_ok=True)


class UsageError(Exception):
    """Something the user must do differently; printed without a traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crewhost-peer", description="Sign in to a Crewhost hub and reach its hosts."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    login = commands.add_parser("login", help="sign in and keep a bearer token")
    login.add_argument("--hub", required=True, help="the hub's address")
    login.add_argument("--email", required=True)
    login.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    commands.add_parser("logout", help="sign out and forget the token")
    commands.add_parser("teams", help="list your teams")
    hosts = commands.add_parser("hosts", help="list a team's hosts")
    hosts.add_argument("--team", help=TEAM_HELP)
    connect = commands.add_parser("connect", help="connect to a host and show what it serves")
    call = commands.add_parser(
        "call", help="call one Team API route and print its result", description=CALL_DESCRIPTION
    )
    call.add_argument("route", metavar="ROUTE", help="e.g. capabilities or host-v1/whoami")
    call.add_argument(
        "args",
        metavar="JSON",
        nargs="?",
        type=_json_object,
        default={},
        help="the route's arguments as one JSON object (default: {})",
    )
    watch = commands.add_parser(
        "watch", help="watch a tab live and report its frame rate", description=WATCH_DESCRIPTION
    )
    watch.add_argument(
        "tab",
        metavar="TAB",
        help="the tab's id (`crewhost-peer call browser-control-v1/list_tabs` lists them)",
    )
    watch.add_argument("--out", type=Path, help="save each frame as DIR/frame-<seq>.jpg")
    watch.add_argument("--seconds", type=float, default=5.0, help="how long to watch (5)")
    providers = commands.add_parser("providers", help="the team's model providers and keys")
    actions = providers.add_subparsers(dest="providers_command", required=True, metavar="ACTION")
    status = actions.add_parser("status", help="each provider and whether its key is usable")
    set_key = actions.add_parser(
        "set",
        help="set a provider's key, read from standard input or a hidden prompt",
        description="Set a provider's key. The key is read from standard input when it is "
        "piped, else from a prompt that does not echo; never from the command line.",
    )
    clear_key = actions.add_parser("clear", help="forget a provider's key")
    for sub in (set_key, clear_key):
        sub.add_argument(
            "provider", help="anthropic, openai, openrouter, or a custom provider's name or id"
        )
    chat = commands.add_parser(
        "chat",
        help="talk to an agent",
        description="Send a message to an agent and follow its turn: its text as it streams, "
        "a line per tool call, a y/N question for each call that needs consent, and the "
        "turn's status (exit status 0 when it is done, else 1). Without MESSAGE, each line "
        "of standard input is a message. Ctrl+C stops the turn.",
    )
    chat.add_argument("agent", metavar="AGENT", help="the agent's name or id")
    chat.add_argument("message", metavar="MESSAGE", nargs="?", help="what to say")
    chat.add_argument("--thread", help="continue this thread (default: start a new one)")
    memories = commands.add_parser(
        "memories",
        help="an agent's memories: list, correct or delete them",
        description="What an agent keeps in memory. Owners and admins reach every memory; "
        "a member reaches their own and the team's that came only from threads they can read.",
    )
    memory_actions = memories.add_subparsers(
        dest="memories_command", required=True, metavar="ACTION"
    )
    memory_list = memory_actions.add_parser("list", help="the agent's memories, newest first")
    memory_edit = memory_actions.add_parser("edit", help="rewrite a memory's text or site")
    memory_delete = memory_actions.add_parser("delete", help="delete a memory, or all of them")
    for sub in (memory_list, memory_edit, memory_delete):
        sub.add_argument("agent", metavar="AGENT", help="the agent's name or id")
    memory_list.add_argument("--site", help="only memories of this site")
    memory_list.add_argument("--search", help="only memories containing this text")
    memory_list.add_argument("--limit", type=int, default=50, help="how many at most (50)")
    memory_edit.add_argument("memory", metavar="MEMORY", help="the memory's id (from list)")
    memory_edit.add_argument("--text", help="the new text (default: keep it)")
    where = memory_edit.add_mutually_exclusive_group()
    where.add_argument("--site", help="tie it to this site")
    where.add_argument("--no-site", action="store_true", help="tie it to no site")
    memory_edit.add_argument("--pin", action=argparse.BooleanOptionalAction, help="essential")
    target = memory_delete.add_mutually_exclusive_group(required=True)
    target.add_argument("memory", metavar="MEMORY", nargs="?", help="the memory's id")
    target.add_argument("--all", action="store_true", help="every memory (owners and admins)")
    hooks = commands.add_parser(
        "hooks",
        help="a routine's webhook triggers: create, rotate, delete, list",
        description="Webhook triggers start a routine's run when another system posts a "
        "signed delivery (Standard Webhooks) to the hub. A trigger's secret is printed once, "
        "when it is created or rotated; after a rotation the previous one stays valid a day.",
    )
    hook_actions = hooks.add_subparsers(dest="hooks_command", required=True, metavar="ACTION")
    hook_create = hook_actions.add_parser("create", help="a new trigger; prints its secret once")
    hook_create.add_argument("routine", metavar="ROUTINE", help="the routine's id")
    hook_create.add_argument(
        "--event-type",
        action="append",
        default=[],
        help="start a run only for this event type (the body's `type`); repeatable",
    )
    hook_create.add_argument(
        "--equals",
        action="append",
        default=[],
        metavar="PATH=JSON",
        help='start a run only when the body\'s field equals the value, e.g. data.action="opened"',
    )
    hook_create.add_argument("--disabled", action="store_true", help="create it switched off")
    hook_rotate = hook_actions.add_parser(
        "rotate", help="a new secret, printed once; the previous one stays valid a day"
    )
    hook_delete = hook_actions.add_parser("delete", help="delete a trigger (its sender gets 404)")
    for sub in (hook_rotate, hook_delete):
        sub.add_argument("hook", metavar="HOOK", help="the trigger's id")
    hook_list = hook_actions.add_parser("list", help="a routine's triggers, without secrets")
    hook_list.add_argument("routine", metavar="ROUTINE", help="the routine's id")
    notifications = commands.add_parser(
        "notifications",
        help="your notifications on a host",
        description="Your notifications on the host, newest first, under a header row "
        "(time, kind, read or not, title and what it is about), then how many are unread.",
    )
    notifications.add_argument("--unread", action="store_true", help="only unread ones")
    notifications.add_argument("--limit", type=int, default=50, help="how many at most (50)")
    routines = commands.add_parser(
        "routines",
        help="an agent's routines: list, create, run now, history, delete",
        description="Work an agent does with nobody in the chat, on a schedule. Owners and "
        "admins reach every routine; a member changes, runs and deletes their own, and reads "
        "the runs of those shown to them.",
    )
    routine_actions = routines.add_subparsers(
        dest="routines_command", required=True, metavar="ACTION"
    )
    routine_list = routine_actions.add_parser("list", help="the agent's routines")
    routine_create = routine_actions.add_parser(
        "create", help="create a routine for an agent", description=ROUTINE_CREATE_DESCRIPTION
    )
    routine_run = routine_actions.add_parser("run", help="run a routine now")
    routine_history = routine_actions.add_parser("history", help="a routine's runs, newest first")
    routine_delete = routine_actions.add_parser("delete", help="delete a routine and its runs")
    for sub in (routine_list, routine_create):
        sub.add_argument("agent", metavar="AGENT", help="the agent's name or id")
    for sub in (routine_run, routine_history, routine_delete):
        sub.add_argument("routine", metavar="ROUTINE", help="the routine's id (from list)")
    routine_history.add_argument("--limit", type=int, default=20, help="how many at most (20)")
    routine_create.add_argument("name", metavar="NAME", help="the routine's name")
    routine_create.add_argument("--message", required=True, help="what starts each run")
    when = routine_create.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", help="five cron fields, e.g. '0 9 * * 1-5' (with --tz)")
    when.add_argument("--every", type=_interval, help="an interval: 15m, 2h (at least 1m)")
    when.add_argument("--at", type=_instant, help="once, at an ISO time (no offset: UTC)")
    routine_create.add_argument("--tz", default="UTC", help="the cron's IANA time zone (UTC)")
    routine_create.add_argument(
        "--thread", choices=["new", "continue"], default="new", help="a thread per run (new)"
    )
    routine_create.add_argument(
        "--audience", choices=["creator", "team"], default="creator", help="who sees its runs"
    )
    routine_create.add_argument(
        "--overlap", choices=["skip", "queue"], default="skip", help="while a run is under way"
    )
    routine_create.add_argument(
        "--missed", choices=["once", "skip"], default="once", help="after downtime"
    )
    routine_create.add_argument("--disabled", action="store_true", help="create it turned off")
    tokens = commands.add_parser(
        "tokens",
        help="personal access tokens for the hub's MCP endpoint",
        description="Tokens with which an outside agent (an MCP client) uses the team's "
        "browsers through the hub's /v1/mcp, as you. Each reaches one host of one team.",
    )
    token_actions = tokens.add_subparsers(dest="tokens_command", required=True, metavar="ACTION")
    token_create = token_actions.add_parser("create", help="a new token; prints its secret once")
    token_create.add_argument("name", metavar="NAME", help="what the token is for")
    token_create.add_argument("--host", help="host id (default: the team's first online host)")
    token_create.add_argument(
        "--scope",
        choices=["browser", "browser+agents"],
        default="browser",
        help="browser tools only (browser), or also the team's agents (browser+agents)",
    )
    token_create.add_argument("--days", type=int, default=30, help="days until it expires (30)")
    token_list = token_actions.add_parser("list", help="your tokens, without their secrets")
    token_list.add_argument(
        "--all", action="store_true", help="every member's tokens (owners and admins)"
    )
    token_revoke = token_actions.add_parser("revoke", help="revoke a token; its sessions end")
    token_revoke.add_argument("token", metavar="TOKEN", help="the token's id (from list)")
    for sub in (token_create, token_list, token_revoke):
        sub.add_argument("--team", help=TEAM_HELP)
    share = commands.add_parser(
        "share-egress",
        help="share this computer's connection with the host's browser profiles",
        description="Record this computer as your proxy on the host (owners and admins) and "
        "carry the browser connections of the profiles that use it until Ctrl+C. Only public "
        "addresses are dialed: never this computer's own, its network's or other special "
        "ones. When this stops, those profiles' pages fail; nothing goes direct.",
    )
    share.add_argument(
        "--label", default=socket.gethostname()[:60], help="what the host calls this computer"
    )
    mcp_actions = add_mcp_parser(commands)
    usage = add_usage_parser(commands)
    skills_actions = add_skills_parser(commands)
    agents, agents_actions = add_agents_parser(commands)
    for sub in (
        *mcp_actions,
        usage,
        *skills_actions,
        connect,
        call,
        watch,
        status,
        set_key,
        clear_key,
        agents,
        *agents_actions,
        chat,
        memory_list,
        memory_edit,
        memory_delete,
        hook_create,
        hook_rotate,
        hook_delete,
        hook_list,
        notifications,
        routine_list,
        routine_create,
        routine_run,
        routine_history,
        routine_delete,
        share,
    ):
        sub.add_argument("--team", help=TEAM_HELP)
        sub.add_argument("--host", help="host id (default: the team's first online host)")
    return parser


def _json_object(text: str) -> dict[str, Any]:
    """``text`` as a JSON object; argparse turns the refusal into a usage error (exit 2)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"not valid JSON ({exc}); give one JSON object in single quotes, "
            """e.g. '{"tabId": "..."}'"""
        ) from exc
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"must be one JSON object, like '{{}}' or '{{\"tabId\": \"...\"}}', not {text}"
        )
    return value


def _interval(text: str) -> int:
    """``15m`` or ``2h`` (a bare number is minutes) as seconds."""
    unit = {"m": 60, "h": 3600}.get(text[-1:].lower())
    number = text[:-1] if unit else text
    if not number.isdigit():
        raise argparse.ArgumentTypeError(f"not an interval like 15m or 2h: {text}")
    return int(number) * (unit or 60)


def _instant(text: str) -> float:
    """An ISO 8601 time as seconds since the epoch; without an offset it is UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO time like 2027-01-04T09:00: {text}") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # An agent's text (or a "·" of our own) that the terminal's encoding cannot show is
        # replaced, rather than ending the command mid-turn. A stream whose file changed
        # beneath it (a forked test runner's) cannot be reconfigured and stays as it is.
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(OSError):
                stream.reconfigure(errors="replace")
    args = build_parser().parse_args(argv)
    config = PeerConfig.default()
    try:
        return asyncio.run(_run(args, config))
    except UsageError as exc:
        print(f"crewhost-peer: {exc}", file=sys.stderr)
        return 2
    except (HubError, TeamApiCallError) as exc:
        print(f"crewhost-peer: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    except AccessRevoked as exc:
        print(
            f"crewhost-peer: the host ended the connection: {exc.message} ({exc.code})",
            file=sys.stderr,
        )
        return 1
    except NoHost as exc:
        print(f"crewhost-peer: {exc}", file=sys.stderr)
        return 1
    except (AgentNotFound, TeamNotFound, McpServerNotFound) as exc:
        print(f"crewhost-peer: {exc} ({exc.code})", file=sys.stderr)
        return 1
    except ViewClosed as exc:
        print(f"crewhost-peer: {exc.reason} ({exc.code})", file=sys.stderr)
        return 1
    except (HostKeyChanged, HostSignatureInvalid, KnownHostsUnreadable) as exc:
        print(f"crewhost-peer: {exc}", file=sys.stderr)
        return 3
    except aiohttp.ClientError as exc:
        print(f"crewhost-peer: cannot reach the hub: {type(exc).__name__}", file=sys.stderr)
        return 1
    except (ConnectionError, TimeoutError) as exc:
        print(
            f"crewhost-peer: the connection failed: {str(exc) or type(exc).__name__}",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return 130  # the shell's code for Ctrl+C; outside a chat's turn nothing needs stopping


async def _run(args: argparse.Namespace, config: PeerConfig) -> int:
    if args.command == "login":
        password = sys.stdin.readline().rstrip("\n") if args.password_stdin else getpass.getpass()
        async with HubClient(args.hub) as hub:
            account = await hub.sign_in(args.email, password)
            assert hub.token is not None
            config.save({"hub": args.hub, "token": hub.token, "account_id": account["id"]})
        print(f"signed in as {account['email']}")
        return 0
    stored = config.load()
    async with HubClient(stored["hub"], stored["token"]) as hub:
        if args.command == "logout":
            await hub.sign_out()
            config.forget()
            print("signed out")
        elif args.command == "teams":
            teams = await hub.teams()
            _print_table(["ID", "ROLE", "NAME"], [[t["id"], t["role"], t["name"]] for t in teams])
        elif args.command == "tokens":
            rows = await tokens_command(hub, args)
            if rows is not None:
                _print_table(["ID", "STATE", "SCOPE", "EXPIRES", "LAST USED", "NAME"], rows)
        elif args.command == "hosts":
            team_id = (await find_team(hub, args.team))["id"]
            _print_table(
                ["ID", "STATE", "NAME"],
                [
                    [h["id"], "online" if h["online"] else "offline", h["name"]]
                    for h in await hub.hosts(team_id)
                ],
            )
        else:
            if args.command == "providers" and args.providers_command == "set":
                # Read before connecting, and never from the command line (shell history, ps).
                args.key = await asyncio.to_thread(_read_key)
            args.hub_url = stored["hub"]
            connection = await _connect(hub, config, stored["account_id"], args.team, args.host)
            try:
                return await _use(connection, args)
            finally:
                await connection.close()
    return 0


async def _use(connection: HostConnection, args: argparse.Namespace) -> int:
    """Run a command that needs the host; its exit status."""
    if args.command == "connect":
        capabilities = await connection.call("capabilities")
        whoami = await connection.call("host-v1/whoami")
        print(f"connected to {connection.host_id} as {whoami['role']}")
        print("capabilities: " + ", ".join(capabilities["capabilities"]))
        return 0
    if args.command == "watch":
        await _watch(connection, args.tab, args.seconds, args.out)
        return 0
    if args.command == "providers":
        await _providers(connection, args)
        return 0
    if args.command == "agents":
        if args.agents_command in (None, "list"):
            await _agents(connection)
            return 0
        return await agents_command(connection, args, _print_table)
    if args.command == "chat":
        return await _chat(connection, args.agent, args.message, args.thread)
    if args.command == "memories":
        await _memories(connection, args)
        return 0
    if args.command == "notifications":
        await _notifications(connection, args.unread, args.limit)
        return 0
    if args.command == "routines":
        await _routines(connection, args)
        return 0
    if args.command == "share-egress":
        return await _share_egress(connection, args.label)
    if args.command == "hooks":
        await _hooks(connection, args)
        return 0
    if args.command == "mcp":
        return await mcp_command(connection, args, _print_table)
    if args.command == "usage":
        return await usage_command(connection, args, _print_table)
    if args.command == "skills":
        return await skills_command(connection, args, _print_table)
    print(json.dumps(await connection.call(args.route, args.args), indent=2))
    return 0


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """``header`` and ``rows`` as lines of columns two spaces apart, each as wide as its
    widest cell (the last one unpadded)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
    return [
        "  ".join(
            [*(cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)), row[-1]]
        )
        for row in [header, *rows]
    ]


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("\n".join(_table(header, rows)))


def _read_key() -> str:
    """The key from standard input when it is piped, else from a prompt that does not echo."""
    key = sys.stdin.readline() if not sys.stdin.isatty() else getpass.getpass("Key: ")
    key = key.strip()
    if not key:
        raise UsageError("the key is empty")
    return key


MEMORY_TEXT_SHOWN = 80


async def _memories(connection: HostConnection, args: argparse.Namespace) -> None:
    agent_id = str((await find_agent(connection, args.agent))["id"])
    if args.memories_command == "list":
        query: dict[str, Any] = {"agentId": agent_id, "limit": args.limit}
        if args.site:
            query["site"] = args.site
        if args.search:
            query["text"] = args.search
        page = await connection.call("agent-memories-v1/list", query)
        rows = [
            [
                m["id"],
                m["scope"],
                "yes" if m["pinned"] else "",
                str(m["uses"]),
                m["site"] or "-",
                " ".join(m["text"].split())[:MEMORY_TEXT_SHOWN],
            ]
            for m in page["memories"]
        ]
        _print_table(["ID", "SCOPE", "ESSENTIAL", "USES", "SITE", "TEXT"], rows)
        print(f"{len(rows)} of {page['total']} memories")
        return
    if args.memories_command == "delete":
        if args.all:
            done = await connection.call("agent-memories-v1/delete_all", {"agentId": agent_id})
        else:
            done = await connection.call(
                "agent-memories-v1/delete", {"agentId": agent_id, "memoryId": args.memory}
            )
        print(f"deleted {done['deleted']}")
        return
    ref = {"agentId": agent_id, "memoryId": args.memory}
    memory = await connection.call("agent-memories-v1/get", ref)
    if args.text is not None or args.site is not None or args.no_site:
        site = None if args.no_site else (args.site or memory["site"])
        memory = await connection.call(
            "agent-memories-v1/edit", {**ref, "text": args.text or memory["text"], "site": site}
        )
    if args.pin is not None:
        memory = await connection.call("agent-memories-v1/pin", {**ref, "pinned": args.pin})
    print(f"{memory['id']}  {memory['site'] or '-'}  {memory['text']}")


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    equals = []
    for rule in args.equals:
        path, sep, raw = rule.partition("=")
        if not sep or not path:
            raise UsageError(f"--equals takes PATH=JSON, not {rule!r}")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw  # a bare word is a string
        equals.append({"path": path, "value": value})
    return {"equals": equals, "eventTypes": args.event_type}


async def _hooks(connection: HostConnection, args: argparse.Namespace) -> None:
    hub_url = str(args.hub_url).rstrip("/")
    if args.hooks_command == "list":
        listed = await connection.call("routines-v1/hooks-list", {"routineId": args.routine})
        rows = [
            [
                h["id"],
                "on" if h["enabled"] else "off",
                ", ".join(h["filters"]["eventTypes"]) or "-",
                hub_url + h["path"],
            ]
            for h in listed["hooks"]
        ]
        _print_table(["ID", "STATE", "EVENT TYPES", "URL"], rows)
        return
    if args.hooks_command == "delete":
        await connection.call("routines-v1/hooks-delete", {"hookId": args.hook})
        print(f"deleted {args.hook}")
        return
    if args.hooks_command == "create":
        made = await connection.call(
            "routines-v1/hooks-create",
            {"routineId": args.routine, "filters": _filters(args), "enabled": not args.disabled},
        )
    else:
        made = await connection.call("routines-v1/hooks-rotate", {"hookId": args.hook})
    hook = made["hook"]
    print(f"hook    {hook['id']}")
    print(f"url     {hub_url + hook['path']}")
    print(f"secret  {made['secret']}")
    print("The secret is shown this once: keep it with the sender now.")


async def _routines(connection: HostConnection, args: argparse.Namespace) -> None:
    command = args.routines_command
    if command in ("run", "history", "delete"):
        ref = {"routineId": args.routine}
        if command == "run":
            run = await connection.call("routines-v1/run", ref)
            reason = f" ({run['reason']})" if run["reason"] else ""
            print(f"run {run['id']}: {run['status']}{reason}")
        elif command == "delete":
            await connection.call("routines-v1/delete", ref)
            print("deleted")
        else:
            runs = await connection.call("routines-v1/history", {**ref, "limit": args.limit})
            rows = [
                [
                    r["id"],
                    r["trigger"],
                    r["status"],
                    _when(r["startedAt"] or r["createdAt"]),
                    r["threadId"] or "-",
                    r["reason"] or "",
                ]
                for r in runs["runs"]
            ]
            _print_table(["RUN", "TRIGGER", "STATUS", "STARTED", "THREAD", "REASON"], rows)
        return
    agent_id = str((await find_agent(connection, args.agent))["id"])
    if command == "list":
        listed = await connection.call("routines-v1/list", {"agentId": agent_id})
        rows = [
            [
                r["id"],
                "on" if r["enabled"] else "off",
                (r["schedule"]["nextTimesLocal"] or ["-"])[0] if r["enabled"] else "-",
                r["schedule"]["words"],
                r["name"],
            ]
            for r in listed["routines"]
        ]
        _print_table(["ID", "STATE", "NEXT", "SCHEDULE", "NAME"], rows)
        return
    if args.cron is not None:
        schedule: dict[str, Any] = {"kind": "cron", "cron": args.cron, "timeZone": args.tz}
    elif args.every is not None:
        schedule = {"kind": "every", "everySeconds": args.every}
    else:
        schedule = {"kind": "once", "at": args.at}
    made = await connection.call(
        "routines-v1/create",
        {
            "agentId": agent_id,
            "name": args.name,
            "message": args.message,
            "schedule": schedule,
            "threadPolicy": args.thread,
            "audience": args.audience,
            "overlap": args.overlap,
            "missed": args.missed,
            "enabled": not args.disabled,
        },
    )
    print(f"created {made['id']}: {made['schedule']['words']}")
    for moment in made["schedule"]["nextTimesLocal"]:
        print(f"  next: {moment}")


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


async def _providers(connection: HostConnection, args: argparse.Namespace) -> None:
    listed = (await connection.call("providers-v1/list"))["providers"]
    if args.providers_command == "status":
        rows = [
            [
                p["id"],
                p["name"],
                "set" if p["keySet"] else "none",
                "yes" if p["usable"] else f"no: {p['unusableReason']}",
                p["defaultModel"] or "-",
            ]
            for p in listed
        ]
        header, *lines = _table(["ID", "NAME", "KEY", "USABLE", "MODEL"], rows)
        print(header)
        for line, provider in zip(lines, listed, strict=True):
            print(line)
            if provider["lastError"]:
                print(f"    last error: {provider['lastError']}")
        return
    wanted = args.provider.casefold()
    matches = [p for p in listed if wanted in (p["id"].casefold(), p["name"].casefold())]
    provider_id = matches[0]["id"] if matches else args.provider
    if args.providers_command == "set":
        shown = await connection.call(
            "providers-v1/set_key", {"provider": provider_id, "key": args.key}
        )
        usable = "usable" if shown["usable"] else f"not usable: {shown['unusableReason']}"
        print(f"key set for {shown['name']} ({usable})")
    else:
        shown = await connection.call("providers-v1/clear_key", {"provider": provider_id})
        print(f"key cleared for {shown['name']}")


async def _agents(connection: HostConnection) -> None:
    """Each agent: id, provider, model (the provider's default when it names none), name."""
    agents = (await connection.call("agents-v1/list"))["agents"]
    defaults = {
        p["id"]: p["defaultModel"]
        for p in (await connection.call("providers-v1/list"))["providers"]
    }
    rows = [
        [
            agent["id"],
            agent["provider"],
            agent["model"] or f"{defaults.get(agent['provider']) or '-'} (default)",
            agent["name"],
        ]
        for agent in agents
    ]
    _print_table(["ID", "PROVIDER", "MODEL", "NAME"], rows)


async def _notifications(connection: HostConnection, unread_only: bool, limit: int) -> None:
    """The caller's notifications, newest first, then the unread count."""
    page = await connection.call(
        "notifications-v1/list", {"unreadOnly": unread_only, "limit": max(1, min(limit, 200))}
    )
    rows = [
        [
            time.strftime("%Y-%m-%d %H:%M", time.localtime(n["createdAt"])),
            n["kind"],
            "read" if n["readAt"] is not None else "unread",
            f"{n['title']}: {n['body']}",
        ]
        for n in page["notifications"]
    ]
    _print_table(["TIME", "KIND", "STATE", "NOTIFICATION"], rows)
    print(f"{page['unread']} unread")


async def _chat(
    connection: HostConnection, wanted: str, message: str | None, thread_id: str | None
) -> int:
    """Talk to the agent ``wanted`` in a new thread or ``thread_id``; 0 when the last turn
    ended done."""
    if message is not None and not message.strip():
        raise UsageError("the message is empty")
    agent = await find_agent(connection, wanted)
    if thread_id is None:
        thread_id = str((await connection.call("threads-v1/start", {"agentId": agent["id"]}))["id"])
        print(f"thread {thread_id} with {agent['name']}", file=sys.stderr)
    else:
        contents = await connection.call("threads-v1/get", {"threadId": thread_id})
        if contents["thread"]["agentId"] != agent["id"]:
            raise UsageError(f"that thread is not one of {agent['name']}'s")
    chat = TerminalChat(
        connection,
        thread_id,
        StdinLines(sys.stdin),
        out=sys.stdout,
        err=sys.stderr,
        interactive=sys.stdin.isatty(),
    )
    return await chat.run(message)


async def _watch(connection: HostConnection, tab_id: str, seconds: float, out: Path | None) -> None:
    """Watch ``tab_id`` for ``seconds``, keeping each frame in ``out``; print the rates."""
    if seconds <= 0:
        raise UsageError("--seconds must be positive")
    if out is not None:
        try:
            await asyncio.to_thread(out.mkdir, parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"--out {out}: cannot make that folder ({exc.strerror or exc})"
            ) from exc
    try:
        view = await open_view(connection, tab_id)
    except ViewClosed as refused:
        if refused.code != "viewClosed":
            raise
        # A view that never opened may have gone with its connection; say why if so.
        if await wait_set(connection.closed, VIEW_GONE_SECONDS):
            raise connection.ended() from None
        raise
    try:
        sizes = await _frames(connection, view, seconds, out)
    finally:
        view.close()
    if view.close_code is not None:
        raise ViewClosed(view.close_code, view.close_reason)
    if view.closed.is_set() and not connection.closed.is_set():
        # A view that closed without a word goes with its connection; the host says why on
        # the team-api channel, which may arrive a moment later.
        await wait_set(connection.closed, VIEW_GONE_SECONDS)
    if connection.closed.is_set():
        raise connection.ended()
    print(f"frames received: {len(sizes)}")
    print(f"fps: {len(sizes) / seconds:.1f}")
    print(f"bytes per frame: {round(sum(sizes) / len(sizes)) if sizes else 0}")
    print(STILL_PAGE_NOTE, file=sys.stderr)


async def _frames(
    connection: HostConnection, view: LiveView, seconds: float, out: Path | None
) -> list[int]:
    """The size of every frame that arrives within ``seconds``; each saved in ``out``. Ends
    early when the view or the whole connection closes (access revoked, host gone)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    sizes: list[int] = []
    closed = asyncio.ensure_future(connection.closed.wait())
    try:
        while (left := deadline - loop.time()) > 0 and not view.closed.is_set():
            arriving = asyncio.ensure_future(view.next_frame(left))
            await asyncio.wait({arriving, closed}, return_when=asyncio.FIRST_COMPLETED)
            if not arriving.done():
                arriving.cancel()
                break
            try:
                frame = arriving.result()
            except TimeoutError:
                break
            sizes.append(len(frame.jpeg))
            if out is not None:
                path = out / f"frame-{frame.sequence}.jpg"
                await asyncio.to_thread(path.write_bytes, frame.jpeg)
    finally:
        closed.cancel()
    return sizes


async def _share_egress(connection: HostConnection, label: str) -> int:
    """Share until Ctrl+C or until the host goes; 1 when the host ended it."""
    share = await share_egress(connection, label=label)
    print(f"sharing this computer as {share.proxy['name']}; Ctrl+C stops", flush=True)
    try:
        await share.stopped.wait()
    finally:
        await share.stop()
    print("crewhost-peer: the host closed the connection; sharing stopped", file=sys.stderr)
    return 1


async def _connect(
    hub: HubClient, config: PeerConfig, account_id: str, team: str | None, host: str | None
) -> HostConnection:
    team_id = str((await find_team(hub, team))["id"])
    if host is None:
        online = [h for h in await hub.hosts(team_id) if h["online"]]
        if not online:
            raise UsageError("no host of this team is online")
        host = str(online[0]["id"])
    return await connect_to_host(hub, team_id, host, config.known_hosts, account_id)


if __name__ == "__main__":
    sys.exit(main())
