"""A DNS server the tests control, and a Chromium that asks it.

``ScriptedNames`` answers each name's questions in turn from a script (the answers of a
name that rebinds); ``DnsServer`` serves it over UDP on port 53 of a loopback address of
its own; ``chromium_asking`` writes a launcher that runs a Chromium with its own
``/etc/resolv.conf`` (a private mount namespace) naming that server, so the browser's own
lookups (a PAC script's ``dnsResolveEx``, its connections) get the scripted answers. The
same ``ScriptedNames`` is a resolver the host's side can call (``(host, port)`` as
``system_resolve``), so every question, from either side, takes the next answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import random
import shutil
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import cast

import dns.flags
import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from server.common.browser_address_policy import IPAddress
from server.common.public_addresses import NameNotResolved


class ScriptedNames:
    """Answers by script: each question about a scripted zone (a name and every name under
    it; an A question, or a call) takes the zone's next answer, in turn.

    A zone with ``cycle`` goes round its answers for ever; without, its last answer
    repeats. ``answered`` records ``(name, address)`` in the order given.
    """

    def __init__(self) -> None:
        self._script: dict[str, tuple[list[str], bool]] = {}
        self._asked: dict[str, int] = {}
        self._lock = threading.Lock()  # the filtering proxy asks from a thread of its own
        self.answered: list[tuple[str, str]] = []

    def script(self, zone: str, answers: Sequence[str], *, cycle: bool = False) -> None:
        """Gives ``zone`` a new script, from its first answer."""
        with self._lock:
            self._script[zone.lower()] = (list(answers), cycle)
            self._asked[zone.lower()] = 0

    def next_answer(self, name: str) -> str | None:
        """The next answer for ``name``, or None when no script covers it."""
        key = name.lower().rstrip(".")
        with self._lock:
            zone = self._zone_of(key)
            if zone is None:
                return None
            answers, cycle = self._script[zone]
            turn = self._asked[zone]
            self._asked[zone] = turn + 1
            answer = answers[turn % len(answers) if cycle else min(turn, len(answers) - 1)]
            self.answered.append((key, answer))
            return answer

    def knows(self, name: str) -> bool:
        return self._zone_of(name.lower().rstrip(".")) is not None

    def _zone_of(self, name: str) -> str | None:
        return next(
            (z for z in self._script if name == z or name.endswith("." + z)),
            None,
        )

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        answer = self.next_answer(host)
        if answer is None:
            raise NameNotResolved(host)
        return [ipaddress.ip_address(answer)]


class _Answering(asyncio.DatagramProtocol):
    def __init__(self, names: ScriptedNames) -> None:
        self._names = names
        self._transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            query = dns.message.from_wire(data)
        except Exception:  # not a DNS question: no answer
            return
        reply = dns.message.make_response(query)
        reply.flags |= dns.flags.RA
        for question in query.question:
            name = question.name.to_text()
            if not self._names.knows(name):
                reply.set_rcode(dns.rcode.NXDOMAIN)
                continue
            if question.rdtype != dns.rdatatype.A:
                continue  # no such record: an empty answer
            answer = self._names.next_answer(name)
            if answer is not None:
                # TTL 0: nothing may keep an answer for the next question.
                reply.answer.append(
                    dns.rrset.from_text(name, 0, dns.rdataclass.IN, dns.rdatatype.A, answer)
                )
        assert self._transport is not None
        self._transport.sendto(reply.to_wire(), addr)


@contextlib.asynccontextmanager
async def dns_server(names: ScriptedNames) -> AsyncIterator[str]:
    """Serves ``names`` on UDP port 53 of a loopback address no other run uses; yields it."""
    loop = asyncio.get_running_loop()
    for _ in range(20):
        octets = (random.randint(100, 250), random.randint(0, 255), random.randint(1, 254))
        address = "127.{}.{}.{}".format(*octets)
        try:
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _Answering(names), local_addr=(address, 53)
            )
        except OSError:
            continue  # taken by another run
        break
    else:
        raise RuntimeError("no loopback address with a free port 53")
    try:
        yield address
    finally:
        transport.close()


def chromium_asking(dns_address: str, chromium: str, folder: Path) -> Path:
    """A launcher for ``chromium`` whose resolver configuration names only ``dns_address``
    (its own mount namespace; root, or a user namespace, makes one)."""
    resolv = folder / "resolv.conf"
    resolv.write_text(f"nameserver {dns_address}\noptions attempts:1 timeout:1\n")
    unshare = shutil.which("unshare")
    assert unshare is not None, "unshare (util-linux) is needed to give Chromium its resolver"
    namespace = "--mount" if os.geteuid() == 0 else "--user --map-root-user --mount"
    launcher = folder / "chromium-asking-dns"
    launcher.write_text(
        "#!/bin/sh\n"
        f"exec {unshare} {namespace} -- /bin/sh -c "
        '\'mount --bind "$0" /etc/resolv.conf && exec "$@"\' '
        f'"{resolv}" "{chromium}" "$@"\n'
    )
    launcher.chmod(0o755)
    return launcher
