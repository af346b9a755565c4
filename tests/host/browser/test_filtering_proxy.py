"""The address guard's filtering proxy over real sockets, spoken to as Chromium speaks
SOCKS5: allowed hosts are spliced both ways, refused ones answered with the refusal,
malformed handshakes refused by their reply code, and nothing outlives ``close``."""

from __future__ import annotations

import asyncio
import ipaddress
import struct
from collections.abc import AsyncIterator

import pytest

from server.common.browser_address_policy import AddressPolicy
from server.host.browser import filtering_proxy
from server.host.browser.address_guard import AddressGuard
from server.host.browser.filtering_proxy import FilteringProxy, Verdict
from tests.support.ports import closed_port

# The test server listens on 127.0.0.2 (loopback on Linux), which the policy allows.
ALLOWED = "127.0.0.2"
HOST_MAP = {"site.test": ALLOWED, "hub.test": "127.0.0.1"}


@pytest.fixture
async def echo() -> AsyncIterator[int]:
    """A target that sends back what it reads, then ends its side when the client does."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.write(b"<end>")
        writer.close()

    server = await asyncio.start_server(serve, ALLOWED, 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


@pytest.fixture
async def guard() -> AsyncIterator[AddressGuard]:
    async with AddressGuard(AddressPolicy.from_entries([ALLOWED]), HOST_MAP) as running:
        await running.start_proxy()
        yield running


def _request(host: str, port: int, *, command: int = 1) -> bytes:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        target = bytes((3, len(host))) + host.encode()
    else:
        target = bytes((1 if address.version == 4 else 4,)) + address.packed
    return bytes((5, command, 0)) + target + struct.pack("!H", port)


async def _socks(
    proxy: FilteringProxy, host: str, port: int
) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter]:
    """Chromium's handshake: no sign-in, then CONNECT; the reply code and the stream."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(b"\x05\x01\x00")
    assert await reader.readexactly(2) == b"\x05\x00"
    writer.write(_request(host, port))
    reply = await reader.readexactly(10)
    assert reply[0] == 5
    return reply[1], reader, writer


async def _closed(writer: asyncio.StreamWriter) -> None:
    writer.close()
    await writer.wait_closed()


async def test_an_allowed_name_is_spliced_both_ways_until_each_side_ends(
    guard: AddressGuard, echo: int
) -> None:
    code, reader, writer = await _socks(guard.proxy, "site.test", echo)
    assert code == 0
    sent = bytes(range(256)) * 16384  # 4 MiB: both write buffers fill and drain
    writer.write(sent)
    received = await reader.readexactly(len(sent))
    assert received == sent
    writer.write_eof()  # the target still answers after the browser finished sending
    assert await reader.read() == b"<end>"
    await _closed(writer)


async def test_a_refused_host_gets_the_refusal_page_and_is_remembered(
    guard: AddressGuard, echo: int
) -> None:
    code, reader, writer = await _socks(guard.proxy, "hub.test", echo)
    assert code == 0  # accepted, so that the tab can show why
    writer.write(b"GET /secret HTTP/1.1\r\nHost: hub.test\r\n\r\n")
    page = await reader.read()
    assert page.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"X-Crewhost-Refused: loopback" in page
    assert b"Crewhost refused http://hub.test/secret: loopback" in page
    await _closed(writer)
    assert guard.proxy.refused_rule("HUB.test", echo) == "loopback"
    assert guard.proxy.refused_rule("site.test", echo) is None


async def test_tls_to_a_refused_address_is_closed_unanswered(
    guard: AddressGuard, echo: int
) -> None:
    for host in ("127.0.0.1", "::1", "169.254.169.254", "localhost", "app.localhost"):
        code, reader, writer = await _socks(guard.proxy, host, echo)
        assert code == 0
        writer.write(b"\x16\x03\x01\x02\x00")
        assert await reader.read() == b""
        await _closed(writer)
    assert guard.proxy.refused_rule("[::1]", echo) == "loopback"
    assert guard.proxy.refused_rule("169.254.169.254", echo) == "link-local"


async def test_what_cannot_be_reached_gets_socks_reply_codes_and_its_cause_is_kept(
    guard: AddressGuard, echo: int
) -> None:
    dead = closed_port(ALLOWED)
    unknown = await _socks(guard.proxy, "nowhere.invalid", 80)
    refused = await _socks(guard.proxy, ALLOWED, dead)
    assert (unknown[0], refused[0]) == (
        filtering_proxy.HOST_UNREACHABLE,
        filtering_proxy.CONNECTION_REFUSED,
    )
    for _, reader, writer in (unknown, refused):
        assert await reader.read() == b""
        await _closed(writer)
    # Chromium says ERR_SOCKS_CONNECTION_FAILED for both; the guard names the cause.
    assert guard.load_error("http://nowhere.invalid/x", "ERR_SOCKS_CONNECTION_FAILED") == (
        "ERR_NAME_NOT_RESOLVED"
    )
    assert guard.load_error(f"http://{ALLOWED}:{dead}/", "ERR_SOCKS_CONNECTION_FAILED") == (
        "ERR_CONNECTION_REFUSED"
    )
    assert guard.load_error(f"http://{ALLOWED}:{dead}/", "ERR_ABORTED") == "ERR_ABORTED"
    # A connection that works again forgets the failure.
    assert guard.proxy.failure("site.test", echo) is None
    code, _, writer = await _socks(guard.proxy, "site.test", echo)
    assert (code, guard.proxy.failure("site.test", echo)) == (0, None)
    await _closed(writer)


async def test_a_judge_that_fails_refuses_that_connection_only(
    echo: int, caplog: pytest.LogCaptureFixture
) -> None:
    async def judge(host: str) -> Verdict:
        if host == "broken.test":
            raise RuntimeError("a bug")
        return Verdict(None, (ipaddress.ip_address(ALLOWED),))

    async with FilteringProxy(judge, lambda rule, head: b"") as proxy:
        broken = await _socks(proxy, "broken.test", echo)
        working = await _socks(proxy, "site.test", echo)
        assert (broken[0], working[0]) == (filtering_proxy.GENERAL_FAILURE, 0)
        working[2].write(b"ping")
        assert await working[1].readexactly(4) == b"ping"
        for _, _, writer in (broken, working):
            await _closed(writer)
    assert "could not judge a connection" in caplog.text


@pytest.mark.parametrize(
    ("greeting", "request_", "answer"),
    [
        (b"\x04\x01\x00", b"", b"\x05\xff"),  # SOCKS4
        (b"\x05\x01\x02", b"", b"\x05\xff"),  # a sign-in only
        (b"\x05\x01\x00", _request("site.test", 80, command=2), b"\x05\x00\x05\x07"),  # BIND
        (b"\x05\x01\x00", b"\x05\x01\x00\x09\x00\x00", b"\x05\x00\x05\x08"),  # no such kind
    ],
)
async def test_a_handshake_it_does_not_speak_is_refused(
    guard: AddressGuard, greeting: bytes, request_: bytes, answer: bytes
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", guard.proxy.port)
    writer.write(greeting + request_)
    said = await reader.read()
    assert said[: len(answer)] == answer
    await _closed(writer)
    assert guard.proxy.connections == 0


async def test_a_silent_or_oversize_handshake_is_let_go(
    guard: AddressGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(filtering_proxy, "_HANDSHAKE_SECONDS", 0.2)
    silent = await asyncio.open_connection("127.0.0.1", guard.proxy.port)
    oversize = await asyncio.open_connection("127.0.0.1", guard.proxy.port)
    oversize[1].write(b"\x05\xff" + b"\x00" * 20000)
    assert await oversize[0].read() == b""
    assert await silent[0].read() == b""
    for _, writer in (silent, oversize):
        await _closed(writer)


async def test_one_connection_past_the_limit_is_closed(echo: int) -> None:
    async def judge(host: str) -> Verdict:
        return Verdict(None, (ipaddress.ip_address(ALLOWED),))

    async with FilteringProxy(judge, lambda rule, head: b"", max_connections=2) as proxy:
        kept = [await _socks(proxy, ALLOWED, echo) for _ in range(2)]
        assert [code for code, _, _ in kept] == [0, 0]
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        assert await reader.read() == b""
        await _closed(writer)
        # The two kept connections still work.
        kept[0][2].write(b"ping")
        assert await kept[0][1].readexactly(4) == b"ping"
    for _, reader, writer in kept:
        assert await reader.read() in (b"", b"<end>")  # ended by close
        await _closed(writer)
    assert proxy.connections == 0
