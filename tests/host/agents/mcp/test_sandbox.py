"""The sandbox a stdio MCP server runs in: it sees its own folder, the system's programs and
what the operator lists, never the host's data or processes; unless given the host's own
network it reaches nothing on the host's loopback, and through the host's proxy only what the
address policy allows; a server it cannot run says why in its status."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from server.common.public_addresses import PublicOnlyPolicy
from server.host.agents.mcp import sandbox as sandbox_module
from server.host.agents.mcp.connections import McpConnections, ServerTarget
from server.host.agents.mcp.sandbox import NOBODY, NetworkMode, StdioSandbox
from server.host.agents.mcp.stdio_transport import StdioCommand
from tests.host.agents.mcp.conftest import ROOT, TEAM, Heard, processes_in, stdio_target
from tests.support.fakes.mcp_servers import SANDBOX_PATHS, stdio_sandbox
from tests.support.ports import closed_port
from tests.support.resolvers import TableResolver
from tests.support.sites import serving
from tests.support.tls import self_signed_context

NODE_SERVER = ROOT / "tests" / "support" / "fakes" / "node_mcp_server.cjs"


@asynccontextmanager
async def sandboxed(sandbox: StdioSandbox) -> AsyncIterator[McpConnections]:
    async with McpConnections(
        Heard(), policy=PublicOnlyPolicy(), stdio_teams=("*",), sandbox=sandbox
    ) as connections:
        yield connections


async def answer(
    connections: McpConnections, target: ServerTarget, tool: str, **args: object
) -> str:
    result = await connections.call(target, tool, dict(args))
    text: str = result.content[0].text  # type: ignore[union-attr]
    return text


async def never_started(sandbox: StdioSandbox, target: ServerTarget) -> str:
    """The reason ``target``'s status gives when it could not start; no process of it ran."""
    async with sandboxed(sandbox) as connections:
        state = await connections.ready(target)
        assert not processes_in(target)
    assert state.status == "error"
    assert state.reason is not None
    return state.reason


async def test_a_server_sees_its_own_folder_and_nothing_of_the_hosts_data(
    tmp_path: Path,
) -> None:
    # Another team's file beside the server's folder, as the host's data folder holds it.
    other = tmp_path / "workspace" / "team-b" / "notes.txt"
    other.parent.mkdir(parents=True)
    other.write_text("another team's notes")
    host_tmp = Path("/tmp") / f"crewhost-sandbox-test-{os.getpid()}"
    host_tmp.write_text("the machine's /tmp")
    target = stdio_target("notes", tmp_path)
    try:
        async with sandboxed(stdio_sandbox()) as connections:
            # Read from the host, the same file is there: the test sees it.
            assert other.read_text() == "another team's notes"
            assert await answer(connections, target, "peek", path=str(other)) == "absent"
            assert await answer(connections, target, "peek", path=str(tmp_path)) == "dir:mcp"
            assert await answer(connections, target, "peek", path=str(host_tmp)) == "absent"
            assert await answer(connections, target, "peek", path="/etc/shadow") == "absent"
            # Its own folder is its home and takes what it writes; the host reads it there.
            assert await answer(connections, target, "keep", name="kept.txt", text="mine") == "kept"
            assert (target.command.cwd / "kept.txt").read_text() == "mine"  # type: ignore[union-attr]
            # The system's programs, read-only.
            assert (await answer(connections, target, "peek", path="/usr/bin")).startswith("dir:")
            written = await answer(connections, target, "keep", name="/usr/bin/planted", text="x")
            assert written.startswith("refused:")
            # Nobody, seeing its own processes alone (the namespace's first process, the
            # server, and the children it runs), where the host's machine runs many.
            who = await answer(connections, target, "whoami")
            uid, gid, seen = (part.split("=")[1] for part in who.split())
            assert (int(uid), int(gid)) == (NOBODY, NOBODY)
            assert int(seen) <= 3 < len([e for e in os.listdir("/proc") if e.isdigit()])
    finally:
        host_tmp.unlink()


async def test_only_the_hosts_own_network_reaches_the_hosts_loopback(tmp_path: Path) -> None:
    dialled: list[str] = []

    async def hello(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        dialled.append("dialled")
        writer.close()

    listener = await asyncio.start_server(hello, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        reach: tuple[tuple[NetworkMode, str], ...] = (
            ("host", "connected"),
            ("proxied", "refused:"),
            ("none", "refused:"),
        )
        for network, said in reach:
            async with sandboxed(stdio_sandbox(network=network)) as connections:
                target = stdio_target("notes", tmp_path / network)
                assert (await answer(connections, target, "dial", port=port)).startswith(said)
    # The host's database, its cache and the rest of its loopback are out of a proxied
    # sandbox's reach as they are of one without a network.
    assert dialled == ["dialled"]


async def test_a_proxied_server_reaches_what_the_policy_allows_and_nothing_else(
    tmp_path: Path,
) -> None:
    heard: list[dict[str, str]] = []

    async def page(request: web.Request) -> web.Response:
        heard.append({"line": f"{request.method} {request.raw_path}", **request.headers})
        return web.Response(text=f"the page at {request.path}")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    async with serving(app) as site:
        names = TableResolver(
            {"site.test": ["127.0.0.1"], "db.test": ["127.0.0.1"], "lan.test": ["10.1.2.3"]}
        )
        # The site's own address and port, as a test's fixture is allowed; the rest of the
        # host's loopback is not.
        policy = PublicOnlyPolicy(
            allowed_endpoints=frozenset({(ipaddress.ip_address("127.0.0.1"), site.port)})
        )
        async with McpConnections(
            Heard(),
            policy=policy,
            resolver=names,
            stdio_teams=("*",),
            sandbox=stdio_sandbox(network="proxied"),
        ) as connections:
            target = stdio_target("notes", tmp_path)

            async def fetch(url: str) -> str:
                return await answer(connections, target, "fetch", url=url)

            assert await fetch(f"http://site.test:{site.port}/notes?day=1") == (
                "200:the page at /notes"
            )
            # The site was asked by the host, for a path of its own, the proxy's own
            # headers kept back, and the connection closed after the answer.
            (request,) = heard
            assert request["line"] == "GET /notes?day=1"
            assert request["Host"] == f"site.test:{site.port}"
            assert request["Connection"] == "close"
            assert "Proxy-Connection" not in request
            refused = await fetch(f"http://db.test:{closed_port()}/")
            assert refused.startswith("403:")
            assert "127.0.0.1 is loopback" in refused
            assert "host.mcp_allowed_hosts" in refused
            assert "10.1.2.3 is a private network" in await fetch("http://lan.test/")
            assert (await fetch("http://169.254.169.254/latest/meta-data/")).startswith("403:")
            assert (await fetch("http://nowhere.test/")).startswith("502:")
            assert len(heard) == 1
            # Its own loopback is its own: reached directly, and nothing listens there.
            assert (await fetch(f"http://127.0.0.1:{site.port}/")).startswith("failed:")
        async with sandboxed(stdio_sandbox(network="none")) as connections:
            target = stdio_target("notes", tmp_path / "none")
            said = await answer(connections, target, "fetch", url=f"http://site.test:{site.port}/")
            assert said.startswith("failed:")
            assert len(heard) == 1


async def test_a_command_outside_what_the_sandbox_shows_never_starts(tmp_path: Path) -> None:
    program = tmp_path / "tools" / "notes-server"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexec sleep 600\n")
    program.chmod(0o755)
    command = StdioCommand(
        "notes-server", (), {"PATH": str(program.parent)}, tmp_path / "mcp" / "outside"
    )
    target = ServerTarget(TEAM, "srv-outside", "outside", "stdio", 10.0, command=command)
    reason = await never_started(stdio_sandbox(), target)
    assert "outside what the stdio sandbox shows" in reason
    assert "host.mcp_stdio_paths" in reason


async def test_a_machine_without_the_sandbox_starts_no_server_and_says_why(
    tmp_path: Path,
) -> None:
    missing = StdioSandbox(tuple(Path(path) for path in SANDBOX_PATHS), bwrap=None)
    reason = await never_started(missing, stdio_target("notes", tmp_path / "missing"))
    assert "bubblewrap" in reason
    assert "host.mcp_stdio_sandbox" in reason
    # A folder the operator listed that is not there: bwrap's own words say so.
    absent = tmp_path / "no-such-runtime"
    broken = StdioSandbox((*missing.paths, absent))
    target = stdio_target("notes", tmp_path / "broken")
    reason = await never_started(broken, target)
    assert "the stdio sandbox could not start" in reason
    assert str(absent) in reason
    # The failure is not kept: once the folder is there, the next start runs.
    absent.mkdir()
    async with sandboxed(broken) as connections:
        assert await answer(connections, target, "echo", text="back") == "back [-]"


async def test_a_listed_folder_under_tmp_is_shown_read_only(tmp_path: Path) -> None:
    """The sandbox's own /tmp is mounted first: a folder the operator lists under the
    machine's /tmp (a checkout of a server's code) is shown on top of it."""
    listed = Path(tempfile.mkdtemp(prefix="crewhost-runtime-", dir="/tmp"))
    try:
        (listed / "version").write_text("runtime 1")
        sandbox = StdioSandbox((*(Path(path) for path in SANDBOX_PATHS), listed))
        target = stdio_target("notes", tmp_path)
        async with sandboxed(sandbox) as connections:
            shown = await answer(connections, target, "peek", path=str(listed / "version"))
            assert shown == "file:runtime 1"
            kept = await answer(connections, target, "keep", name=str(listed / "x"), text="x")
            assert kept.startswith("refused:")
    finally:
        shutil.rmtree(listed)


async def test_a_proxied_sandbox_without_the_systems_python_starts_no_server_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "HANDOFF_PYTHONS", (str(tmp_path / "no-python3"),))
    target = stdio_target("notes", tmp_path)
    reason = await never_started(stdio_sandbox(network="proxied"), target)
    assert "needs python3 in /usr/bin" in reason
    assert "host.mcp_stdio_network" in reason


async def test_a_nodejs_server_reaches_pages_through_the_proxy_with_fetch_and_http(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "mcp" / "node"
    folder.mkdir(parents=True)
    pages = web.Application()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=f"a page over {request.scheme}")

    pages.router.add_get("/page", page)
    runner = web.AppRunner(pages)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        tls = self_signed_context(folder, ["site.test"])
        await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls).start()
        plain, secure = (address[1] for address in runner.addresses)
        loopback = ipaddress.ip_address("127.0.0.1")
        policy = PublicOnlyPolicy(
            allowed_endpoints=frozenset({(loopback, plain), (loopback, secure)})
        )
        names = TableResolver({"site.test": ["127.0.0.1"], "db.test": ["127.0.0.1"]})
        # The server's own certificate authority, as an admin gives a server one.
        env = {"NODE_EXTRA_CA_CERTS": str(folder / "cert.pem")}
        spec = StdioCommand("node", (str(NODE_SERVER),), env, folder)
        target = ServerTarget(TEAM, "srv-node", "node-pages", "stdio", 20.0, command=spec)
        async with McpConnections(
            Heard(), policy=policy, resolver=names, stdio_teams=("*",), sandbox=stdio_sandbox()
        ) as connections:
            for tool in ("fetch_url", "get_url"):
                said = await answer(connections, target, tool, url=f"http://site.test:{plain}/page")
                assert said == "200:a page over http"
                said = await answer(
                    connections, target, tool, url=f"https://site.test:{secure}/page"
                )
                assert said == "200:a page over https"
                refused = await answer(
                    connections, target, tool, url=f"http://db.test:{closed_port()}/"
                )
                assert refused.startswith("failed:the proxy refused db.test:")
                assert "127.0.0.1 is loopback" in refused
                # Its own loopback is reached directly, and holds nothing.
                alone = await answer(
                    connections, target, tool, url=f"http://127.0.0.1:{plain}/page"
                )
                assert alone.startswith("failed:")
    finally:
        await runner.cleanup()
