"""The proxy a sandboxed stdio server's connections leave by, spoken to as a server's HTTP
client speaks to it: a tunnel where the policy allows, a clear answer and nothing dialled
where it does not, and a malformed request refused without harm to the next."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.common.public_addresses import PublicOnlyPolicy
from server.host.agents.mcp import stdio_egress
from server.host.agents.mcp.stdio_egress import (
    HEAD_LIMIT,
    EgressProxy,
    HandoffFailed,
    ProxyAnswer,
    ProxyRequest,
    parse_request,
    receive_listener,
)
from tests.support.fuzzing import examples
from tests.support.ports import closed_port
from tests.support.resolvers import TableResolver

LOOPBACK = ipaddress.ip_address("127.0.0.1")


@dataclass
class Echo:
    """A target on the loopback: it answers each line in capitals and counts its callers."""

    port: int = 0
    callers: int = 0
    ended: list[bool] = field(default_factory=list)


@asynccontextmanager
async def echo() -> AsyncIterator[Echo]:
    target = Echo()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target.callers += 1
        while line := await reader.readline():
            writer.write(line.upper())
            await writer.drain()
        target.ended.append(True)  # the caller's end of sending reached the target
        writer.write(b"BYE\n")
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    target.port = server.sockets[0].getsockname()[1]
    async with server:
        yield target


@asynccontextmanager
async def proxy(allowed_port: int, **options: int) -> AsyncIterator[int]:
    """A proxy whose policy allows the loopback's ``allowed_port`` alone; yields its port."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    policy = PublicOnlyPolicy(allowed_endpoints=frozenset({(LOOPBACK, allowed_port)}))
    names = TableResolver({"echo.test": ["127.0.0.1"]})
    async with EgressProxy(listener, policy, names, "notes", **options):
        yield port


async def ask(port: int, request: bytes) -> bytes:
    """Send ``request`` and end sending, then read the proxy's whole answer until it
    closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    writer.write_eof()
    answer = await reader.read()
    writer.close()
    return answer


async def test_a_tunnel_carries_bytes_both_ways_and_each_sides_end() -> None:
    async with echo() as target, proxy(target.port) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT echo.test:{target.port} HTTP/1.1\r\nHost: x\r\n\r\nhello\n".encode())
        assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 200 Connection established\r\n\r\n"
        assert await reader.readline() == b"HELLO\n"
        writer.write(b"again\n")
        assert await reader.readline() == b"AGAIN\n"
        writer.write_eof()  # the client is done sending; the target still answers
        assert await reader.read() == b"BYE\n"
        writer.close()
    assert (target.callers, target.ended) == (1, [True])


async def test_a_plain_request_goes_to_the_target_made_relative() -> None:
    seen: list[bytes] = []

    async def site(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        writer.close()

    server = await asyncio.start_server(site, "127.0.0.1", 0)
    site_port = server.sockets[0].getsockname()[1]
    async with server, proxy(site_port) as port:
        answer = await ask(
            port,
            f"GET http://echo.test:{site_port}/a?b=1 HTTP/1.1\r\n"
            "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\n"
            "Accept: */*\r\n\r\n".encode(),
        )
    assert answer.endswith(b"\r\n\r\nok")
    assert seen == [
        f"GET /a?b=1 HTTP/1.1\r\nHost: echo.test:{site_port}\r\nAccept: */*\r\n"
        "Connection: close\r\n\r\n".encode()
    ]


@pytest.mark.parametrize(
    ("request_head", "status", "said"),
    [
        (b"CONNECT echo.test:{closed} HTTP/1.1\r\n\r\n", b"403", b"127.0.0.1 is loopback"),
        (b"CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n", b"403", b"10.0.0.1 is a private network"),
        (b"GET http://[::1]:{allowed}/ HTTP/1.1\r\n\r\n", b"403", b"::1 is loopback"),
        (b"CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n", b"502", b"could not be resolved"),
        (b"GET /relative HTTP/1.1\r\nHost: a\r\n\r\n", b"400", b"absolute http:// URL"),
        (b"GET https://echo.test/ HTTP/1.1\r\n\r\n", b"400", b"absolute http:// URL"),
        (b"CONNECT echo.test HTTP/1.1\r\n\r\n", b"400", b"not a host and port"),
        (b"CONNECT echo.test:99999 HTTP/1.1\r\n\r\n", b"400", b"not a host and port"),
        (b"CONNECT me:pw@echo.test:443 HTTP/1.1\r\n\r\n", b"400", b"user name"),
        (b"HELLO\r\n\r\n", b"400", b"not an HTTP/1 request line"),
        (b"GET http://[::1/ HTTP/1.1\r\n\r\n", b"400", b"is not a URL"),
        (b"GET http://echo.test/ HTTP/1.1\r\nno colon\r\n\r\n", b"400", b"malformed"),
    ],
)
async def test_what_is_refused_is_answered_and_nothing_is_dialled(
    request_head: bytes, status: bytes, said: bytes
) -> None:
    async with echo() as target, proxy(target.port) as port:
        head = request_head.replace(b"{closed}", str(closed_port()).encode())
        answer = await ask(port, head.replace(b"{allowed}", str(target.port).encode()))
        assert answer.startswith(b"HTTP/1.1 " + status + b" ")
        assert said in answer
        assert b"Connection: close" in answer
    assert target.callers == 0


async def test_an_allowed_target_that_does_not_answer_is_a_bad_gateway() -> None:
    silent = closed_port()
    async with proxy(silent) as port:
        answer = await ask(port, f"CONNECT echo.test:{silent} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 502 ")
    assert f"echo.test:{silent} did not answer".encode() in answer


async def test_an_oversize_head_is_refused_and_the_proxy_serves_the_next() -> None:
    async with echo() as target, proxy(target.port) as port:
        flood = b"GET http://echo.test/ HTTP/1.1\r\nX: " + b"a" * HEAD_LIMIT + b"\r\n\r\n"
        answer = await ask(port, flood)
        assert answer.startswith(b"HTTP/1.1 400 ")
        assert b"longer than" in answer
        tunnel = await ask(port, f"CONNECT echo.test:{target.port} HTTP/1.1\r\n\r\nx\n".encode())
    assert tunnel.startswith(b"HTTP/1.1 200 ")
    assert target.callers == 1


async def test_connections_past_the_limit_are_turned_away_and_closing_ends_the_rest() -> None:
    async with echo() as target, proxy(target.port, max_connections=1) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT echo.test:{target.port} HTTP/1.1\r\n\r\n".encode())
        await reader.readuntil(b"\r\n\r\n")
        turned_away = await ask(port, f"CONNECT echo.test:{target.port} HTTP/1.1\r\n\r\n".encode())
        assert turned_away.startswith(b"HTTP/1.1 503 ")
    # The proxy closed with the session: the open tunnel ended with it.
    assert await reader.read() == b""
    writer.close()
    assert target.callers == 1


async def test_a_request_that_never_comes_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio_egress, "HEAD_SECONDS", 0.2)
    async with proxy(closed_port()) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"CONNECT echo.test")
        answer = await reader.read()
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_plain_request_without_a_host_header_gets_the_urls() -> None:
    request = parse_request(b"POST http://a.test:8080/x HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
    assert (request.host, request.port, request.tunnel) == ("a.test", 8080, False)
    assert request.head == (
        b"POST /x HTTP/1.0\r\nHost: a.test:8080\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )


async def test_the_handoff_takes_one_listening_socket_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The sandbox's end closed before it sent anything: it ended first.
    ours, theirs = socket.socketpair()
    theirs.close()
    with pytest.raises(HandoffFailed, match="ended before"):
        await receive_listener(ours)
    ours.close()
    # Something that is not a listening TCP socket.
    ours, theirs = socket.socketpair()
    datagram = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    socket.send_fds(theirs, [b"L"], [datagram.fileno()])
    with pytest.raises(HandoffFailed, match="not its proxy"):
        await receive_listener(ours)
    for each in (ours, theirs, datagram):
        each.close()
    # Nothing within the time.
    monkeypatch.setattr(stdio_egress, "HANDOFF_SECONDS", 0.1)
    ours, theirs = socket.socketpair()
    with pytest.raises(HandoffFailed, match="in time"):
        await receive_listener(ours)
    ours.close()
    theirs.close()


@settings(max_examples=examples(200, 5000), deadline=None)
@given(
    line=st.one_of(
        st.binary(max_size=80),
        st.tuples(
            st.sampled_from([b"CONNECT", b"GET", b"POST", b"connect"]),
            st.sampled_from([b"http://", b"https://", b"//", b"", b"http://u:p@"]),
            st.one_of(
                st.binary(max_size=40),
                st.tuples(
                    st.sampled_from([b"", b"[", b"[::1]", b"a.test", b"u@", b"a.test:"]),
                    st.text("[]:@/?#%.a1-", max_size=16).map(str.encode),
                ).map(b"".join),
            ),
            st.sampled_from([b" HTTP/1.1", b" HTTP/2", b"", b" HTTP/1.0 x"]),
        ).map(lambda parts: parts[0] + b" " + b"".join(parts[1:])),
    ),
    headers=st.lists(st.binary(max_size=40), max_size=4),
)
def test_any_head_is_a_request_or_a_clear_refusal(line: bytes, headers: list[bytes]) -> None:
    head = b"\r\n".join([line, *headers]) + b"\r\n\r\n"
    outcome = _outcome(head)
    if isinstance(outcome, ProxyAnswer):
        assert outcome.status == 400
        assert outcome.bytes().startswith(b"HTTP/1.1 400 Bad Request\r\n")
        return
    assert outcome.host
    assert 0 < outcome.port < 65536
    # A plain request goes on as one line of its own, relative, and closes after it.
    if not outcome.tunnel:
        first = outcome.head.split(b"\r\n", 1)[0]
        assert first.split(b" ")[1].startswith(b"/")
        assert outcome.head.endswith(b"Connection: close\r\n\r\n")


def _outcome(head: bytes) -> ProxyRequest | ProxyAnswer:
    try:
        return parse_request(head)
    except ProxyAnswer as answer:
        return answer
