"""A proxy is dialled at the address its judge pinned: Chromium is given that address, the
relay's https exit tunnels over TLS checked against the proxy's name, and a proxy whose
name turned to loopback is never dialled."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from server.common.public_addresses import PublicOnlyPolicy
from server.host.proxies.addresses import ProxyAddress
from server.host.proxies.exits import ExitRefused, HttpsProxyExit, Socks5Exit
from server.host.proxies.judge import ProxyAddressJudge, ProxyAddressRefused
from server.host.proxies.launcher import ProxyLauncher
from server.host.proxies.marks import ProxyMarks
from server.host.proxies.plan import ProxyPlan
from tests.support.resolvers import TableResolver

PROXY_NAME = "proxy.test"


def _certificate(folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for ``PROXY_NAME``: the proxy's context and one that
    trusts it, checking the name."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PROXY_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(PROXY_NAME)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "proxy.pem", folder / "proxy.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(cert_path, key_path)
    trusting = ssl.create_default_context(cafile=str(cert_path))
    return serving, trusting


@dataclass
class TunnelProxy:
    """An HTTPS proxy that answers CONNECT with ``answer`` and then echoes the tunnel."""

    port: int = 0
    answer: bytes = b"HTTP/1.1 200 Connection Established\r\n\r\n"
    heads: list[bytes] = field(default_factory=list)


@pytest.fixture
async def tunnel_proxy(tmp_path: Path) -> AsyncIterator[tuple[TunnelProxy, ssl.SSLContext]]:
    serving, trusting = _certificate(tmp_path)
    proxy = TunnelProxy()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            proxy.heads.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(proxy.answer)
            await writer.drain()
            while data := await reader.read(1024):
                writer.write(data)
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=serving)
    proxy.port = server.sockets[0].getsockname()[1]
    yield proxy, trusting
    server.close()
    await server.wait_closed()


def _judge(answers: list[str], *allowed: str) -> tuple[ProxyAddressJudge, TableResolver]:
    resolver = TableResolver({PROXY_NAME: answers})
    return ProxyAddressJudge(PublicOnlyPolicy.from_entries(allowed), resolver), resolver


async def test_an_https_proxy_is_a_connect_tunnel_over_tls_to_its_pinned_address(
    tunnel_proxy: tuple[TunnelProxy, ssl.SSLContext],
) -> None:
    proxy, trusting = tunnel_proxy
    judge, resolver = _judge(["127.0.0.1"], PROXY_NAME)  # an on-premises proxy, allowed
    address = ProxyAddress("https", PROXY_NAME, proxy.port, "agent", "pa:ss")
    exit_ = HttpsProxyExit(address, timeout=10, judge=judge, tls=trusting)
    upstream = await exit_.open("site.example", 443)
    await upstream.write(b"hello")
    assert await upstream.read(5) == b"hello"
    await upstream.close()
    sign_in = base64.b64encode(b"agent:pa:ss").decode()
    assert proxy.heads == [
        b"CONNECT site.example:443 HTTP/1.1\r\nHost: site.example:443\r\n"
        + f"Proxy-Authorization: Basic {sign_in}\r\n\r\n".encode()
    ]
    assert resolver.asked == [PROXY_NAME]

    # A refused sign-in as most proxies answer it, and as tinyproxy does (401).
    for refusal in (b"407 Proxy Authentication Required", b"401 Unauthorized"):
        proxy.answer = b"HTTP/1.1 " + refusal + b"\r\n\r\n"
        with pytest.raises(ExitRefused) as refused:
            await exit_.open("site.example", 443)
        assert refused.value.why == "signIn"
    proxy.answer = b"HTTP/1.1 403 Forbidden\r\n\r\n"
    with pytest.raises(ExitRefused) as refused:
        await exit_.open("site.example", 443)
    assert refused.value.why == "target"


async def test_an_https_proxy_whose_certificate_is_not_its_names_is_unreachable(
    tunnel_proxy: tuple[TunnelProxy, ssl.SSLContext],
) -> None:
    proxy, _trusting = tunnel_proxy
    judge, _ = _judge(["127.0.0.1"], PROXY_NAME)
    address = ProxyAddress("https", PROXY_NAME, proxy.port)
    with pytest.raises(ExitRefused) as refused:
        await HttpsProxyExit(address, timeout=10, judge=judge).open("site.example", 443)
    assert refused.value.why == "unreachable"
    assert proxy.heads == []


@pytest.mark.parametrize("scheme", ["https", "socks5"])
async def test_a_proxy_name_that_turned_to_loopback_is_never_dialled(scheme: str) -> None:
    dialled: list[str] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        dialled.append("connected")
        writer.close()

    server = await asyncio.start_server(record, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    judge, resolver = _judge(["93.184.216.34", "127.0.0.1"])
    address = ProxyAddress(scheme, PROXY_NAME, port, "agent", "secret")
    exit_ = (
        HttpsProxyExit(address, timeout=10, judge=judge)
        if scheme == "https"
        else Socks5Exit(address, timeout=10, judge=judge)
    )
    try:
        for _ in range(2):  # judged again at every connection
            with pytest.raises(ExitRefused) as refused:
                await exit_.open("site.example", 443)
            assert refused.value.why == "unreachable"
    finally:
        server.close()
        await server.wait_closed()
    assert dialled == []
    assert resolver.asked == [PROXY_NAME, PROXY_NAME]


async def test_chromium_is_given_the_judged_address_never_the_name() -> None:
    judge, resolver = _judge(["93.184.216.34", "2606:4700::1111"])
    launcher = ProxyLauncher(ProxyMarks(), judge=judge)
    for scheme, user, server in (
        ("http", "agent", "http://93.184.216.34:3128"),
        ("socks5", None, "socks5://93.184.216.34:3128"),
    ):
        address = ProxyAddress(scheme, PROXY_NAME, 3128, user, "pw" if user else None)
        launched = await launcher.start(ProxyPlan("t", "proxy-1", "p", "address", address))
        assert launched.setting.server == server
        assert launched.setting.username == user
        assert launched.relay is None
    assert resolver.asked == [PROXY_NAME, PROXY_NAME]
    resolver.table[PROXY_NAME] = ["169.254.169.254"]
    address = ProxyAddress("http", PROXY_NAME, 3128)
    with pytest.raises(ProxyAddressRefused) as refused:
        await launcher.start(ProxyPlan("t", "proxy-1", "p", "address", address))
    assert "169.254.169.254 is link-local / cloud metadata" in refused.value.message
