"""``crewhost-peer mcp``: the team's MCP servers (list, add, update, test, tools, remove,
sign-in).

Environment values, headers and an OAuth client's secret are never taken from the command
line (shell history, the process list): ``--env NAME`` and ``--header NAME`` name them,
and their values are read from standard input, one line each in the order given, then
the client secret's line for ``--oauth-client-secret-stdin`` (or asked for without echo).
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable, Sequence
from typing import Any

from peer.connection import HostConnection


class McpServerNotFound(Exception):
    """No server of that name or id in the team."""

    code = "mcpServerNotFound"


def add_mcp_parser(commands: Any) -> list[argparse.ArgumentParser]:
    """The ``mcp`` command and its actions; answers the actions (which take --team, --host)."""
    mcp = commands.add_parser(
        "mcp",
        help="the team's MCP servers: list, add, update, test, tools, remove, sign-in",
        description="MCP servers whose tools the team's agents call (owners and admins add, "
        "change, test and remove them; members list them). Environment values, headers and "
        "an OAuth client secret are read from standard input, one line each in the order of "
        "--env and --header, then the secret, never from the command line, and never "
        "printed.",
    )
    actions = mcp.add_subparsers(dest="mcp_command", required=True, metavar="ACTION")
    listed = actions.add_parser("list", help="the team's servers and their status")
    add = actions.add_parser("add", help="add a stdio or HTTP server")
    add.add_argument("name", metavar="NAME", help="lowercase letters, digits and hyphens")
    how = add.add_mutually_exclusive_group(required=True)
    how.add_argument("--command", dest="server_command", help="stdio: the command the host starts")
    how.add_argument("--url", help="Streamable HTTP: the server's address")
    add.add_argument(
        "--arg", action="append", default=[], help="stdio: one argument of the command; repeatable"
    )
    add.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME",
        help="stdio: an environment variable whose value is read from standard input; repeatable",
    )
    add.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME",
        help="HTTP: a header whose value is read from standard input; repeatable",
    )
    add.add_argument("--timeout", type=float, default=60.0, help="seconds a call may take (60)")
    add.add_argument("--disabled", action="store_true", help="add it switched off")
    update = actions.add_parser(
        "update", help="change a server's address, OAuth client, timeout or switch"
    )
    update.add_argument("server", metavar="SERVER", help="the server's name or id")
    update.add_argument("--url", help="HTTP: a new address (drops its sign-in)")
    update.add_argument("--timeout", type=float, help="seconds a call may take")
    switch = update.add_mutually_exclusive_group()
    switch.add_argument("--enable", dest="enabled", action="store_const", const=True)
    switch.add_argument("--disable", dest="enabled", action="store_const", const=False)
    for sub in (add, update):
        sub.add_argument(
            "--oauth-client-id",
            metavar="ID",
            help="HTTP: the OAuth client registered by hand with a server's authorization "
            "server that registers none ('' clears it and its secret)",
        )
        sub.add_argument(
            "--oauth-client-secret-stdin",
            action="store_true",
            help="HTTP: read that client's secret from standard input (an empty line clears it)",
        )
    test = actions.add_parser(
        "test", help="connect, initialize and list its tools (exit 1 when it fails)"
    )
    tools = actions.add_parser("tools", help="its tools, and those not offered with why")
    remove = actions.add_parser("remove", help="delete a server")
    sign_in = actions.add_parser(
        "sign-in",
        help="start an OAuth sign-in; finish it in the web client's live view of its tab",
    )
    for sub in (test, tools, remove, sign_in):
        sub.add_argument("server", metavar="SERVER", help="the server's name or id")
    return [listed, add, update, test, tools, remove, sign_in]


async def mcp_command(
    connection: HostConnection,
    args: argparse.Namespace,
    table: Callable[[Sequence[str], Sequence[Sequence[str]]], None],
) -> int:
    """Run one ``mcp`` action; its exit status."""
    command = args.mcp_command
    if command == "list":
        servers = (await connection.call("mcp-servers-v1/list"))["servers"]
        rows = [
            [
                s["name"],
                s["transport"],
                "on" if s["enabled"] else "off",
                s["status"]["status"],
                str(s["status"]["tools"]),
                s["url"] or " ".join([s["command"] or "", *s["args"]]),
            ]
            for s in servers
        ]
        table(["NAME", "TRANSPORT", "STATE", "STATUS", "TOOLS", "RUNS"], rows)
        return 0
    if command == "add":
        return await _add(connection, args)
    server = await _find(connection, args.server)
    if command == "update":
        return await _update(connection, server, args)
    if command == "remove":
        await connection.call("mcp-servers-v1/delete", {"id": server["id"]})
        print(f"removed {server['name']}")
        return 0
    if command == "sign-in":
        started = await connection.call("mcp-sign-in-v1/start", {"serverId": server["id"]})
        print(
            f"sign-in to {server['name']} started in the private tab {started['tabId']}: "
            "finish it in the web client (its live view) within 10 minutes"
        )
        return 0
    tested = await connection.call("mcp-servers-v1/test", {"id": server["id"]})
    status = tested["status"]
    if command == "test":
        reason = f": {status['reason']}" if status["reason"] else ""
        print(f"{server['name']}: {status['status']}{reason}")
        if status["status"] == "connected":
            print(f"{status['tools']} tools offered, {len(status['problems'])} not offered")
        return 0 if status["status"] == "connected" else 1
    table(
        ["TOOL", "HINTS", "DESCRIPTION"],
        [
            [t["fullName"], ", ".join(t["hints"]) or "-", t["description"].splitlines()[0]]
            for t in tested["tools"]
        ],
    )
    for problem in status["problems"]:
        print(f"not offered: {problem}")
    if status["status"] != "connected":
        print(f"{server['name']}: {status['status']}: {status['reason']}")
        return 1
    return 0


async def _add(connection: HostConnection, args: argparse.Namespace) -> int:
    names = list(args.env if args.server_command else args.header)
    values = {name: _read_value(name) for name in names}
    request: dict[str, Any] = {
        "name": args.name,
        "callTimeout": args.timeout,
        "enabled": not args.disabled,
    }
    if args.server_command:
        request.update(transport="stdio", command=args.server_command, args=args.arg, env=values)
    else:
        request.update(transport="http", url=args.url, headers=values)
    request.update(_client(args))
    added = await connection.call("mcp-servers-v1/add", request)
    secrets = ", ".join(sorted({**added["env"], **added["headers"]})) or "none"
    print(f"added {added['name']} ({added['transport']}); values set: {secrets}{_said(added)}")
    return 0


async def _update(
    connection: HostConnection, server: dict[str, Any], args: argparse.Namespace
) -> int:
    request: dict[str, Any] = {"id": server["id"], **_client(args)}
    if args.url is not None:
        request.update(transport="http", url=args.url)
    if args.timeout is not None:
        request["callTimeout"] = args.timeout
    if args.enabled is not None:
        request["enabled"] = args.enabled
    changed = await connection.call("mcp-servers-v1/update", request)
    print(f"updated {changed['name']}{_said(changed)}")
    return 0


def _client(args: argparse.Namespace) -> dict[str, str]:
    """The OAuth client's fields of a request: its id as given, its secret from stdin."""
    fields: dict[str, str] = {}
    if args.oauth_client_id is not None:
        fields["oauthClientId"] = args.oauth_client_id
    if args.oauth_client_secret_stdin:
        fields["oauthClientSecret"] = _read_value("OAuth client secret")
    return fields


def _said(server: dict[str, Any]) -> str:
    """The server's OAuth client in words: its id, and whether its secret is set."""
    if not server.get("oauthClientId"):
        return ""
    secret = "secret set" if server.get("oauthClientSecret") == "set" else "no secret"
    return f"; OAuth client {server['oauthClientId']} ({secret})"


def _read_value(name: str) -> str:
    """One value from standard input when it is piped, else from a prompt without echo."""
    if sys.stdin.isatty():
        return getpass.getpass(f"{name}: ")
    return sys.stdin.readline().rstrip("\r\n")


async def _find(connection: HostConnection, name_or_id: str) -> dict[str, Any]:
    servers = (await connection.call("mcp-servers-v1/list"))["servers"]
    for server in servers:
        if name_or_id in (server["name"], server["id"]):
            return dict(server)
    raise McpServerNotFound(f"no MCP server named {name_or_id} in the team")
