"""``crewhost admin doctor``: checks what a server needs to start and run, and says what to fix.

Each check answers findings; nothing here changes the data folder, the key ring or the
database, ever (the doctor runs before the command line makes the folder private, so it
sees the modes as they are, and it opens every secret only to read it).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import sqlalchemy as sa
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, make_url

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRingError, KeyRingNotWrapped
from server.config import Settings
from server.db.engine import ALEMBIC_DIR, Database
from server.host.agents.mcp.sandbox import SandboxUnavailable, StdioSandbox
from server.host.agents.mcp.stdio_egress import NODE_PRELOAD, proxy_environment
from server.host.chromium import find_chromium, is_headless_shell
from server.host.services.keys import SecretKeys, key_ring_file

CHROMIUM_VERSION_SECONDS = 30
NODE_PROBE_SECONDS = 15
PORT_PROBE_SECONDS = 3
ICE_SCHEMES = {"stun": 3478, "stuns": 5349, "turn": 3478, "turns": 5349}


class Status(Enum):
    OK = "ok"
    WARN = "warn"
    FIX = "FIX"


@dataclass(frozen=True, slots=True)
class Finding:
    """One check's verdict; ``fix`` says what to do when it is not ok."""

    check: str
    status: Status
    detail: str
    fix: str | None = None

    def render(self) -> str:
        line = f"{self.status.value:<4}  {self.check}: {self.detail}"
        return line + (f"\n      fix: {self.fix}" if self.fix else "")


async def diagnose(settings: Settings) -> list[Finding]:
    """Every check, in order: Chromium, the stdio sandbox and Node.js behind its proxy,
    database, data folder, key ring, port, STUN/TURN."""
    checks: list[Callable[[Settings], Awaitable[list[Finding]]]] = [
        check_chromium,
        check_stdio_sandbox,
        check_node_proxy,
        check_database,
        check_file_modes,
        check_key_ring,
        check_port,
        check_ice_servers,
    ]
    findings: list[Finding] = []
    for check in checks:
        findings.extend(await check(settings))
    return findings


async def check_chromium(settings: Settings) -> list[Finding]:
    path = find_chromium(settings.host.chromium)
    if path is None:
        where = settings.host.chromium
        return [
            Finding(
                "chromium",
                Status.FIX,
                f"CREWHOST_CHROMIUM names {where}, which is not an executable"
                if where
                else "no Chromium found",
                "install Debian's chromium package (make chromium), or set CREWHOST_CHROMIUM "
                "to a Chromium binary",
            )
        ]
    try:
        process = await asyncio.create_subprocess_exec(
            str(path),
            "--version",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), CHROMIUM_VERSION_SECONDS)
    except (OSError, TimeoutError) as exc:
        return [Finding("chromium", Status.FIX, f"{path} does not run: {exc}", _CHROMIUM_FIX)]
    if process.returncode != 0:
        said = (err or out).decode(errors="replace").strip()[:200]
        return [Finding("chromium", Status.FIX, f"{path} fails: {said}", _CHROMIUM_FIX)]
    kind = "; the headless shell, kept to the address policy by the host's filtering proxy"
    version = out.decode(errors="replace").strip() + (kind if is_headless_shell(path) else "")
    return [Finding("chromium", Status.OK, f"{path} ({version})")]


_CHROMIUM_FIX = "reinstall Chromium (make chromium) or point CREWHOST_CHROMIUM at a working one"


async def check_stdio_sandbox(settings: Settings) -> list[Finding]:
    """Whether the stdio MCP servers the host may run would start in their sandbox: it is
    made once, around ``true``, in a folder of its own outside the data folder."""
    host = settings.host
    teams = ", ".join(host.mcp_stdio_teams)
    if not teams:
        return [Finding("stdio sandbox", Status.OK, "no team may add stdio MCP servers")]
    if not host.mcp_stdio_sandbox:
        return [
            Finding(
                "stdio sandbox",
                Status.WARN,
                f"off: the stdio MCP servers of {teams} run as this user, seeing what it sees",
                "turn host.mcp_stdio_sandbox on (Debian's bubblewrap package)",
            )
        ]
    sandbox = StdioSandbox.from_settings(host.mcp_stdio_paths, network=host.mcp_stdio_network)
    with tempfile.TemporaryDirectory(prefix="crewhost-doctor-") as folder:
        try:
            await sandbox.check(Path(folder))
        except SandboxUnavailable as exc:
            return [Finding("stdio sandbox", Status.FIX, str(exc), _SANDBOX_FIX)]
    shown = ", ".join(host.mcp_stdio_paths) or "nothing"
    network = _STDIO_NETWORK[host.mcp_stdio_network]
    detail = (
        f"{sandbox.bwrap} runs the stdio MCP servers of {teams}, {network}, "
        f"showing {shown} besides /usr"
    )
    if host.mcp_stdio_network == "host":
        fix = "set host.mcp_stdio_network to proxied: public addresses alone, through the host"
        return [Finding("stdio sandbox", Status.WARN, detail, fix)]
    return [Finding("stdio sandbox", Status.OK, detail)]


async def check_node_proxy(settings: Settings) -> list[Finding]:
    """Whether the Node.js on the host's ``PATH`` (the one ``npx`` servers run on) sends its
    ``fetch`` through the proxy the proxied stdio network gives: asked of ``node`` itself,
    with the same variables and preload, pointing at a proxy of the doctor's own on
    loopback that answers every request. Nothing to say where no stdio server would run
    behind one."""
    host = settings.host
    proxied = host.mcp_stdio_sandbox and host.mcp_stdio_network == "proxied"
    node = shutil.which("node")
    if not host.mcp_stdio_teams or not proxied or node is None:
        return []
    asked: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            asked.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            await writer.drain()
        writer.close()

    proxy = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = proxy.sockets[0].getsockname()[1]
    preload = str(NODE_PRELOAD)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        **proxy_environment(port, node_preload=preload),
    }
    try:
        process = await asyncio.create_subprocess_exec(
            node,
            "-e",
            _NODE_PROBE,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        out, _err = await asyncio.wait_for(process.communicate(), NODE_PROBE_SECONDS)
    except (OSError, TimeoutError) as exc:
        reason = "it did not answer in time" if isinstance(exc, TimeoutError) else str(exc)
        return [Finding("node behind the proxy", Status.WARN, f"{node} does not run: {reason}")]
    finally:
        proxy.close()
        await proxy.wait_closed()
    version = out.decode(errors="replace").split(" ", 1)[0] or "of no version"
    if asked:
        detail = f"{node} ({version}) sends fetch through the stdio servers' proxy"
        return [Finding("node behind the proxy", Status.OK, detail)]
    return [
        Finding(
            "node behind the proxy",
            Status.WARN,
            f"{node} ({version}) ignores HTTP_PROXY: the fetch of a Node.js stdio MCP server "
            "reaches nothing on the proxied network",
            "install a Node.js release that reads NODE_USE_ENV_PROXY, or set "
            "host.mcp_stdio_network to host where the stdio servers may reach all the host "
            "reaches, its loopback included",
        )
    ]


# A fetch of a name that never resolves: it arrives only where it went to the proxy.
_NODE_PROBE = (
    "fetch('http://doctor.invalid/').then("
    "() => process.stdout.write(process.version + ' proxied'), "
    "() => process.stdout.write(process.version + ' direct'))"
)
_STDIO_NETWORK = {
    "proxied": "reaching public addresses through the host's proxy",
    "none": "without the network",
    "host": "with the host's own network, its loopback's services included",
}
_SANDBOX_FIX = (
    "install Debian's bubblewrap package, let this user make user namespaces "
    "(kernel.unprivileged_userns_clone), and list only folders that exist in "
    "host.mcp_stdio_paths"
)


def _revisions(connection: Connection) -> tuple[tuple[str, ...], str | None, set[str]]:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    scripts = ScriptDirectory.from_config(config)
    known = {script.revision for script in scripts.walk_revisions()}
    current = MigrationContext.configure(connection).get_current_heads()
    return current, scripts.get_current_head(), known


def _no_database_yet(settings: Settings) -> bool:
    """A SQLite database whose file is not there: the first start makes it."""
    url = make_url(settings.database_url)
    return url.get_backend_name() == "sqlite" and not Path(url.database or "").exists()


async def check_database(settings: Settings) -> list[Finding]:
    url = make_url(settings.database_url)
    if _no_database_yet(settings):
        return [Finding("database", Status.OK, "no database yet: the first start makes it")]
    db = Database(settings.database_url, pool_size=1)
    shown = url.render_as_string(hide_password=True)
    try:
        async with db.read() as conn:
            current, head, known = await conn.run_sync(_revisions)
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        return [
            Finding(
                "database",
                Status.FIX,
                f"cannot open {shown}: {type(exc).__name__}",
                "check CREWHOST_DATABASE_URL, that the database runs and that this user may use it",
            )
        ]
    finally:
        await db.close()
    if not current:
        return [Finding("database", Status.OK, f"{shown} is empty: the first start migrates it")]
    unknown = [revision for revision in current if revision not in known]
    if unknown:
        return [
            Finding(
                "database",
                Status.FIX,
                f"revision {', '.join(unknown)} is newer than this Crewhost (newest {head})",
                "run the Crewhost version that wrote it, or restore a backup from before",
            )
        ]
    if current != (head,):
        return [
            Finding(
                "database",
                Status.WARN,
                f"revision {', '.join(current)}, behind {head}",
                "the next start migrates it (or run crewhost admin migrate); take a backup first",
            )
        ]
    return [Finding("database", Status.OK, f"{shown} at revision {head} (the newest)")]


def _shared_entries(root: Path) -> list[str]:
    shared = []
    for folder, folders, files in os.walk(root):
        for name in (".", *folders, *files):
            path = Path(folder) / name
            mode = path.lstat().st_mode
            if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & 0o077:
                relative = str(path.relative_to(root))
                shared.append("the folder itself" if relative == "." else relative)
    return sorted(set(shared))


async def check_file_modes(settings: Settings) -> list[Finding]:
    root = settings.data_dir
    if not root.exists():
        return [Finding("data folder", Status.OK, f"{root} does not exist yet (made 0700)")]
    shared = await asyncio.to_thread(_shared_entries, root)
    if shared:
        shown = ", ".join(shared[:5]) + (f" and {len(shared) - 5} more" if len(shared) > 5 else "")
        return [
            Finding(
                "data folder",
                Status.FIX,
                f"{root} has {len(shared)} entries open to other users: {shown}",
                f"chmod -R go-rwx {root} (every crewhost command but doctor also does it)",
            )
        ]
    return [Finding("data folder", Status.OK, f"{root}: folders 0700, files 0600 or stricter")]


async def check_key_ring(settings: Settings) -> list[Finding]:
    ring_file = key_ring_file(settings)
    usage: dict[str | None, int] = {}
    if not _no_database_yet(settings):
        db = Database(settings.database_url, pool_size=1)
        try:
            usage = dict(await SecretKeys(db, ring_file).key_usage())
        except (OSError, sa.exc.SQLAlchemyError):
            usage = {}  # the database check says what is wrong with it
        finally:
            await db.close()
    sealed = sum(usage.values())
    if not ring_file.exists():
        if sealed:
            return [
                Finding(
                    "key ring",
                    Status.FIX,
                    f"{ring_file.path} is missing, but {sealed} secrets need it",
                    "restore host/key-ring.json from a backup of this data folder",
                )
            ]
        return [Finding("key ring", Status.OK, "none yet: the first start makes it")]
    try:
        ring = await asyncio.to_thread(ring_file.load)
    except KeyRingNotWrapped as exc:
        return [
            Finding(
                "key ring",
                Status.FIX,
                exc.message,
                "stop the server, run `crewhost admin wrap-key-ring` with the same passphrase, "
                "then start it (or unset CREWHOST_MASTER_PASSPHRASE)",
            )
        ]
    except KeyRingError as exc:
        return [
            Finding(
                "key ring",
                Status.FIX,
                exc.message,
                "set CREWHOST_MASTER_PASSPHRASE to the ring's passphrase, or restore the ring "
                "from a backup",
            )
        ]
    missing = sorted(str(key) for key in usage if key not in ring.key_ids)
    if missing:
        return [
            Finding(
                "key ring",
                Status.FIX,
                f"secrets sealed with keys the ring lacks: {', '.join(missing)}",
                "restore the key ring from a backup taken with those keys, or set those "
                "secrets again",
            )
        ]
    opened = sealed
    if sealed:
        db = Database(settings.database_url, pool_size=1)
        try:
            check = await SecretKeys(db, ring_file).check_secrets(SecretBox(ring))
        finally:
            await db.close()
        if check.unreadable:
            shown = "; ".join(str(secret) for secret in check.unreadable[:5])
            more = len(check.unreadable) - 5
            return [
                Finding(
                    "key ring",
                    Status.FIX,
                    f"{len(check.unreadable)} of {check.checked} secrets do not open: {shown}"
                    + (f" and {more} more" if more > 0 else ""),
                    "set those secrets again (or clear them), or restore the database and key "
                    "ring from one backup",
                )
            ]
        opened = check.checked
    return [
        Finding(
            "key ring",
            Status.OK,
            f"{len(ring.key_ids)} keys (active {ring.active_id}), opens all {opened} secrets",
        )
    ]


async def _crewhost_answers(url: str) -> bool:
    timeout = aiohttp.ClientTimeout(total=PORT_PROBE_SECONDS)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(f"{url}/healthz") as reply,
        ):
            body = await reply.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return False
    return isinstance(body, dict) and body.get("status") == "ok" and "version" in body


async def check_port(settings: Settings) -> list[Finding]:
    bind, port = settings.hub.bind, settings.hub.port
    if port == 0:
        return [Finding("port", Status.OK, "a free port is chosen at start")]
    try:
        infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        host = f"[{bind}]" if ":" in bind else bind
        if exc.errno == errno.EADDRINUSE:
            if await _crewhost_answers(f"http://{_probe_host(host)}:{port}"):
                return [Finding("port", Status.OK, f"{bind}:{port} is this server's, running")]
            return [
                Finding(
                    "port",
                    Status.FIX,
                    f"{bind}:{port} is taken by another program",
                    "stop it, or set CREWHOST_HUB_PORT to a free port",
                )
            ]
        return [
            Finding(
                "port",
                Status.FIX,
                f"cannot listen on {bind}:{port}: {exc.strerror or exc}",
                "set CREWHOST_HUB_BIND to an address of this machine (ports below 1024 need "
                "privileges)",
            )
        ]
    return [Finding("port", Status.OK, f"{bind}:{port} is free")]


def _probe_host(host: str) -> str:
    # A wildcard bind is reached on loopback.
    return {"0.0.0.0": "127.0.0.1", "[::]": "[::1]"}.get(host, host)  # noqa: S104


def _ice_problem(url: str, has_username: bool, has_secret: bool) -> str | None:
    scheme, _, rest = url.partition(":")
    if scheme not in ICE_SCHEMES or not rest:
        return f"{url}: not a stun:, stuns:, turn: or turns: address"
    address = urlsplit(f"//{rest.split('?')[0]}")
    try:
        host, port = address.hostname, address.port
    except ValueError:
        return f"{url}: the port is not a number from 1 to 65535"
    if not host:
        return f"{url}: no host name"
    if port == 0:
        return f"{url}: port 0"
    if scheme.startswith("turn") and not (has_username or has_secret):
        return f"{url}: a TURN server needs a username and credential, or rtc.turn_secret"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        try:
            socket.getaddrinfo(host, port or ICE_SCHEMES[scheme])
        except OSError:
            return f"{url}: the name {host} does not resolve"
    return None


async def check_ice_servers(settings: Settings) -> list[Finding]:
    servers = settings.rtc.ice_servers
    if not servers:
        return [
            Finding(
                "stun/turn",
                Status.WARN,
                "none set: host candidates only, so members behind strict NATs cannot connect",
                'set rtc.ice_servers, e.g. [{"urls": ["turn:turn.example.com:3478"]}] with '
                "rtc.turn_secret (deploy/ has a coturn config)",
            )
        ]
    has_secret = settings.rtc.turn_secret is not None
    problems = [
        problem
        for server in servers
        for url in server.urls
        if (
            problem := await asyncio.to_thread(_ice_problem, url, bool(server.username), has_secret)
        )
    ]
    if problems:
        return [
            Finding(
                "stun/turn",
                Status.FIX,
                "; ".join(problems),
                "correct rtc.ice_servers (CREWHOST_RTC_ICE_SERVERS)",
            )
        ]
    count = sum(len(server.urls) for server in servers)
    return [Finding("stun/turn", Status.OK, f"{count} addresses, each well formed and resolving")]


def exit_status(findings: list[Finding]) -> int:
    """1 when something must be fixed, else 0 (warnings do not fail)."""
    return 1 if any(finding.status is Status.FIX for finding in findings) else 0
