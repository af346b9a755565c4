"""The server under test of the benchmarks: a real ``crewhost serve`` process and its accounts.

Shared by the scripts in ``bench/``: start the server on a free loopback port with a
data folder of the caller's, wait until it answers, read the one-time setup code it
prints, sign up the first owner and invited members, stop it with SIGTERM; and the
nearest-rank percentile every report uses.
"""

from __future__ import annotations

import asyncio
import math
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

PASSWORD = "bench correct horse battery"
CREWHOST = Path(sys.executable).with_name("crewhost")
CSRF_HEADER = "X-Crewhost-CSRF"
SETUP_CODE = re.compile(r"/app/setup#code=([A-Za-z0-9_-]+)")
SERVER_START_SECONDS = 180.0


# --- the server under test -----------------------------------------------------------


@dataclass
class Server:
    """A ``crewhost serve`` process and where its output goes."""

    process: subprocess.Popen[bytes]
    base: str
    stdout_path: Path
    stderr_path: Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    data_dir: Path,
    env: Mapping[str, str],
    extra_args: Sequence[str] = (),
    program: Sequence[str] = (str(CREWHOST),),
) -> Server:
    """``crewhost serve`` on a free loopback port, with ``env`` as its whole environment
    (a bench's accounts all sign up and in from loopback: unless ``env`` says otherwise,
    one address may do so as often as it likes, and the providers may be on loopback);
    ``program`` is what runs the ``crewhost`` command line (a wrapper of it, say)."""
    env = {
        "CREWHOST_SECURITY_SIGNIN_PER_ADDRESS_BURST": "1000000",
        # The fake model providers listen on loopback: a local model server, allowed.
        "CREWHOST_HOST_PROVIDER_ALLOWED_HOSTS": "127.0.0.1",
        **env,
    }
    port = free_port()
    stdout_path, stderr_path = data_dir / "serve.out", data_dir / "serve.log"
    command = [*program, "serve", "--port", str(port), "--data-dir", str(data_dir)]
    command += extra_args
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        process = subprocess.Popen(  # noqa: S603 - our own executable, fixed arguments
            command, stdout=out, stderr=err, env=dict(env)
        )
    return Server(process, f"http://127.0.0.1:{port}", stdout_path, stderr_path)


def stop_server(server: Server) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


def server_failed(server: Server, what: str) -> RuntimeError:
    log_tail = server.stderr_path.read_text(errors="replace")[-2000:]
    return RuntimeError(f"{what}; server log ends with:\n{log_tail}")


async def wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise server_failed(server, "the server exited")
            try:
                async with session.get(server.base + "/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise server_failed(server, "the server did not become healthy")


async def read_setup_code(server: Server) -> str:
    """The one-time code from the setup link ``crewhost serve`` prints on first start.

    ``crewhost admin setup-code`` run before the server would not do: the server
    issues a fresh code on start, and that voids every older one.
    """
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        found = SETUP_CODE.search(server.stdout_path.read_text(errors="replace"))
        if found:
            return found.group(1)
        await asyncio.sleep(0.1)
    raise server_failed(server, "the server printed no setup link")


# --- accounts and tokens (outside every timed window) ----------------------------------


async def post_json(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], token: str | None = None
) -> dict[str, Any]:
    # A request without a bearer token is a browser's to the hub: it needs the CSRF header.
    headers = {"Authorization": f"Bearer {token}"} if token else {CSRF_HEADER: "1"}
    async with session.post(url, json=body, headers=headers) as response:
        reply: dict[str, Any] = await response.json()
        if response.status != 201:
            raise RuntimeError(f"POST {url} answered {response.status}: {reply}")
        return reply


async def first_team_id(session: aiohttp.ClientSession, base: str, token: str) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    async with session.get(base + "/v1/teams", headers=headers) as response:
        reply = await response.json()
        if response.status != 200:
            raise RuntimeError(f"GET /v1/teams answered {response.status}: {reply}")
        return str(reply["teams"][0]["id"])


def member_email(index: int) -> str:
    return f"bench{index}@example.com"


async def create_accounts(base: str, setup_code: str, count: int) -> list[str]:
    """``count`` accounts (an owner, then invited members); a bearer token for each.

    Account ``i`` has the address ``member_email(i)`` and the password ``PASSWORD``.
    """
    async with aiohttp.ClientSession() as session:
        owner = await post_json(
            session,
            base + "/v1/accounts",
            {
                "email": member_email(0),
                "name": "Bench owner",
                "password": PASSWORD,
                "setupCode": setup_code,
                "teamName": "Bench team",
                "client": "peer",
            },
        )
        team_id = await first_team_id(session, base, owner["token"])
        invitation = await post_json(
            session,
            f"{base}/v1/teams/{team_id}/invitations",
            {"role": "member", "maxUses": 1000},
            owner["token"],
        )
        members = await asyncio.gather(
            *(
                post_json(
                    session,
                    base + "/v1/accounts",
                    {
                        "email": member_email(index),
                        "name": f"Bench member {index}",
                        "password": PASSWORD,
                        "invitationCode": invitation["code"],
                        "client": "peer",
                    },
                )
                for index in range(1, count)
            )
        )
    return [owner["token"], *(str(member["token"]) for member in members)]


# --- numbers ----------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending sequence (0.0 when it is empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]
