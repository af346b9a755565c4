"""Local MCP servers written with the SDK, run as child processes: over stdio, or over
Streamable HTTP on a loopback port.

``python -m tests.support.fakes.mcp_servers <kind> [port]`` runs one kind:

- ``notes``: ``add_note`` (keeps a note, answers how many), ``list_notes``, ``echo`` (answers
  its text and the environment variable ``NOTES_LABEL``), ``where`` (its working folder and
  environment), ``pid``, ``spawn`` (starts a ``sleep`` of its own, answers its pid),
  ``limits`` (its resource limits), ``token`` (over HTTP, the ``X-Notes-Token`` header),
  ``shout`` (300 lines to stderr), ``slow`` (sleeps its seconds), ``big`` (answers its
  size in characters), ``grow`` (adds a tool and says so with
  ``notifications/tools/list_changed``);
- ``crash``: ``echo``, and ``crash`` that ends the process while answering;
- ``hang``: reads and never answers (a server stuck in ``initialize``);
- ``garbage``: writes lines that are not JSON-RPC to stdout;
- ``malformed``: JSON-RPC by hand, whose results break the protocol's rules: ``count``
  declares an output schema and answers structured content against it, ``blob`` answers
  an image block without its data, ``echo`` answers its text properly;
- ``many``: 10,000 tools;
- ``cycle``: a tool whose input schema has a ``$ref`` cycle;
- ``image``: ``picture`` answers a PNG image and a line of text.

``notes_oauth_server(port, issuer)`` is the notes to be served over Streamable HTTP to a
bearer token only (``tests.support.fakes.oauth_server.guarded_notes`` serves it): it
answers 401 with ``WWW-Authenticate`` naming its protected-resource metadata (RFC 9728,
served by the SDK), whose authorization server is ``issuer``
(``tests.support.fakes.oauth_server``), and checks each token there (RFC 7662).

With a port it serves Streamable HTTP at ``http://127.0.0.1:<port>/mcp`` (each answer an
event stream; with ``json`` after the port, one JSON body); with a port and ``sse``, the
older HTTP+SSE transport at ``http://127.0.0.1:<port>/sse``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import Tool, ToolAnnotations

from server.host.agents.mcp.sandbox import NetworkMode, StdioSandbox

# The smallest PNG: one transparent pixel.
PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
MANY_TOOLS = 10_000


class IntrospectedTokens:
    """Asks the authorization server whether a bearer token is active (RFC 7662)."""

    def __init__(self, issuer: str) -> None:
        self._url = f"{issuer}/introspect"

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx2.AsyncClient(trust_env=False) as client:
            answer = (await client.post(self._url, data={"token": token})).json()
        if not answer.get("active"):
            return None
        return AccessToken(
            token=token,
            client_id=answer["client_id"],
            scopes=str(answer.get("scope", "")).split(),
            expires_at=answer.get("exp"),
        )


def notes_server(**options: Any) -> MCPServer:
    server = MCPServer("notes", **options)
    notes: list[str] = []

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def add_note(text: str) -> str:
        """Keep a note."""
        notes.append(text)
        return f"kept note {len(notes)}: {text}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_notes() -> str:
        """Every note kept so far, one a line."""
        return "\n".join(notes) or "(no notes)"

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text, and the NOTES_LABEL variable."""
        return f"{text} [{os.environ.get('NOTES_LABEL', '-')}]"

    @server.tool()
    def where() -> str:
        """The working folder and the environment's names."""
        return f"cwd={os.getcwd()} env={','.join(sorted(os.environ))}"

    @server.tool()
    def pid() -> str:
        """The server's process id (in its sandbox's namespace, when it has one)."""
        return str(os.getpid())

    @server.tool()
    def peek(path: str) -> str:
        """What the server can see of ``path``: ``absent``, ``unreadable``, a folder's
        names (``dir:a,b``) or a file's first 40 characters (``file:…``)."""
        target = Path(path)
        try:
            if target.is_dir():
                return "dir:" + ",".join(sorted(entry.name for entry in target.iterdir()))
            if not target.exists():
                return "absent"
            return "file:" + target.read_text("utf-8", "replace")[:40]
        except PermissionError:
            return "unreadable"

    @server.tool()
    def keep(name: str, text: str) -> str:
        """Write ``text`` to ``name`` in the working folder; answer ``kept`` or the error."""
        try:
            Path(name).write_text(text, "utf-8")
        except OSError as exc:
            return f"refused:{exc.strerror}"
        return "kept"

    @server.tool()
    def dial(port: int) -> str:
        """Connect to 127.0.0.1:``port``: ``connected``, or the error."""
        import socket

        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5):
                return "connected"
        except OSError as exc:
            return f"refused:{exc.strerror or type(exc).__name__}"

    @server.tool()
    def fetch(url: str) -> str:
        """GET ``url`` as any HTTP client of the environment does (its proxy variables
        honoured): ``<status>:<body's first 200 characters>``, or ``failed:<why>``."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310
                return f"{answer.status}:{answer.read().decode('utf-8', 'replace')[:200]}"
        except urllib.error.HTTPError as error:
            return f"{error.code}:{error.read().decode('utf-8', 'replace')[:200]}"
        except OSError as exc:
            reason = getattr(exc, "reason", exc)
            return f"failed:{getattr(reason, 'strerror', None) or reason}"

    @server.tool()
    def whoami() -> str:
        """The server's user and group ids, and the processes it sees."""
        seen = sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit())
        return f"uid={os.getuid()} gid={os.getgid()} processes={len(seen)}"

    @server.tool()
    def spawn() -> str:
        """Starts a child of its own that outlives the server's stdin (a worker, a browser
        it drives); answers the child's process id."""
        child = subprocess.Popen(
            ["sleep", "600"],  # noqa: S607
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return str(child.pid)

    @server.tool()
    def token(ctx: Context) -> str:
        """Over HTTP: the X-Notes-Token header of the call's request."""
        request: Any = ctx.request_context.request
        return "-" if request is None else str(request.headers.get("x-notes-token", "-"))

    @server.tool()
    def limits() -> str:
        """The process's limits: CPU seconds, writable memory, open files, no new privileges."""
        import resource

        with open("/proc/self/status", encoding="ascii") as status:
            privs = next(line for line in status if line.startswith("NoNewPrivs:")).split()[1]
        return " ".join(
            [
                f"cpu={resource.getrlimit(resource.RLIMIT_CPU)[0]}",
                f"data={resource.getrlimit(resource.RLIMIT_DATA)[0]}",
                f"files={resource.getrlimit(resource.RLIMIT_NOFILE)[0]}",
                f"nonewprivs={privs}",
            ]
        )

    @server.tool()
    def shout(text: str) -> str:
        """Write the text to stderr 300 times, then answer."""
        for n in range(300):
            print(f"{text} {n}", file=sys.stderr, flush=True)
        return "shouted"

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        import anyio

        await anyio.sleep(seconds)
        return "woke"

    @server.tool(structured_output=False)
    def big(size: int) -> str:
        """Answer ``size`` characters."""
        return "x" * size

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool named ``grown`` and tell the client the list changed."""

        def grown() -> str:
            """A tool added while the server ran."""
            return "grown"

        server.add_tool(grown)
        await ctx.session.send_tool_list_changed()
        return "grew"

    return server


def notes_oauth_server(port: int, issuer: str) -> MCPServer:
    """The notes, to be served on ``port`` to the bearer tokens ``issuer`` gave alone."""
    auth = AuthSettings(
        issuer_url=issuer,  # type: ignore[arg-type]
        resource_server_url=f"http://127.0.0.1:{port}/mcp",  # type: ignore[arg-type]
        validate_token_resource=False,
    )
    return notes_server(auth=auth, token_verifier=IntrospectedTokens(issuer))


def crash_server() -> MCPServer:
    server = MCPServer("crash")

    @server.tool()
    def echo(text: str) -> str:
        """Answer the text."""
        return text

    @server.tool()
    def crash() -> str:
        """End the process while answering."""
        os._exit(3)

    return server


def many_server() -> MCPServer:
    server = MCPServer("many")
    tools = [
        Tool(name=f"tool_{n}", description="one of many", input_schema={"type": "object"})
        for n in range(MANY_TOOLS)
    ]

    async def list_tools() -> list[Tool]:
        return tools

    server.list_tools = list_tools  # type: ignore[method-assign]
    return server


def cycle_server() -> MCPServer:
    server = MCPServer("cycle")

    @server.tool()
    def tree(node: dict[str, Any]) -> str:
        """Walk a tree."""
        return "walked"

    schema = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "required": ["node"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
    }
    server._tool_manager._tools["tree"].parameters = schema
    return server


def image_server() -> MCPServer:
    server = MCPServer("image")

    @server.tool(structured_output=False)
    def picture() -> list[Any]:
        """A picture and a caption."""
        return [Image(data=PIXEL_PNG, format="png"), "a one-pixel picture"]

    return server


def hang() -> None:
    for _line in sys.stdin:
        time.sleep(0)
    time.sleep(3600)


def garbage() -> None:
    for _line in sys.stdin:
        sys.stdout.write("this is not JSON-RPC\n")
        sys.stdout.flush()


MALFORMED_TOOLS = [
    {
        "name": "count",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
    {"name": "blob", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
]


def _malformed_answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "malformed", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": MALFORMED_TOOLS}
    if method != "tools/call":
        return {}
    name = params["name"]
    if name == "count":
        return {"content": [{"type": "text", "text": "3"}], "structuredContent": {"n": "three"}}
    if name == "blob":
        return {"content": [{"type": "image", "data": 5}]}
    text = str(params.get("arguments", {}).get("text", ""))
    return {"content": [{"type": "text", "text": text}]}


def malformed() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        result = _malformed_answer(message["method"], message.get("params") or {})
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        sys.stdout.write("\n")
        sys.stdout.flush()


SERVERS = {
    "notes": notes_server,
    "crash": crash_server,
    "many": many_server,
    "cycle": cycle_server,
    "image": image_server,
}


def stdio_command(kind: str) -> tuple[str, list[str]]:
    """The command and arguments that run ``kind`` over stdio."""
    return sys.executable, ["-m", "tests.support.fakes.mcp_servers", kind]


# What the stdio sandbox must show for these servers to run in it: the repository (its
# code and virtualenv) and the Python the virtualenv is made from.
SANDBOX_PATHS = (str(Path(__file__).resolve().parents[3]), sys.base_prefix)


def stdio_sandbox(*, network: NetworkMode = "proxied") -> StdioSandbox:
    """The host's stdio sandbox as the suite's hosts keep it, showing these servers."""
    return StdioSandbox.from_settings(SANDBOX_PATHS, network=network)


def main(argv: list[str]) -> None:
    kind = argv[0]
    if kind == "hang":
        hang()
        return
    if kind == "garbage":
        garbage()
        return
    if kind == "malformed":
        malformed()
        return
    server = SERVERS[kind]()
    if len(argv) > 2 and argv[2] == "sse":
        server.run("sse", host="127.0.0.1", port=int(argv[1]))
    elif len(argv) > 2 and argv[2] == "json":
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]), json_response=True)
    elif len(argv) > 1:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
