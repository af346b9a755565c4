"""Browser proxies of a team: saved addresses and members' computers, and which named
profile uses which.

A password is sealed by the secret box before it is written, bound to its team and
proxy, and is opened only for the browser (``plan_for``); what the routes show is
whether one is set. A proxy's own address is judged by the host's address policy
(``ProxyAddressJudge``) before it is saved, and again at every connection to it.
Changes run one at a time. Two admins can still edit one proxy: a
save names the address its form opened with and a delete names the profiles its
question showed, and either is refused with ``browserProxyChanged`` when the proxy is
different now. A change that matters to the browser closes the tabs of the profiles
using the proxy (their next tab launches behind the new one); a delete makes them
Automatic. Every change is announced with ``browser-profiles-changed``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.crypto.box import SecretBox, SecretUnreadable
from server.common.errors import Conflict, Internal, InvalidArgument, NotFound
from server.common.protocol.events import BrowserProfilesChanged, HostEvent
from server.common.protocol.ids import PROXY_PREFIX
from server.db.engine import Database
from server.db.tables import PROXY_PASSWORD
from server.host.browser.partitions import Partition
from server.host.egress.channels import EgressOnline
from server.host.proxies.addresses import (
    NamedAddress,
    ProxyAddress,
    parse_proxy_address,
    proxy_names,
)
from server.host.proxies.judge import ProxyAddressJudge
from server.host.proxies.marks import ProxyMarks, ProxyStatusChanged
from server.host.proxies.plan import ProxyPlan
from server.host.services.kept_secrets import refuse_moved
from server.host.storage.profiles import BrowserProfileRepository
from server.host.storage.proxies import ProxyRepository, ProxyRow

log = logging.getLogger(__name__)

MAX_PROXIES = 50
MAX_PROFILE_REFS = 100
MAX_LABEL_LENGTH = 60


class ProxyPartitions(Protocol):
    """What the service needs of the browser engine."""

    async def close_partition(self, team_id: str, partition: Partition) -> None: ...


@dataclass(frozen=True, slots=True)
class ProxyStatus:
    """What an owner or admin may know of a proxy: never its password."""

    id: str
    kind: str
    name: str
    address: str | None
    password_set: bool
    member_id: str | None
    profiles: tuple[str, ...]
    # ``unreachable``, ``signIn``, ``offline`` (a computer not sharing now), or None.
    status: str | None


class ProxyService:
    """List, create, update, delete and assign a team's browser proxies."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        box: SecretBox,
        partitions: ProxyPartitions,
        marks: ProxyMarks,
        announce: Callable[[str, HostEvent], None],
        computer_online: Callable[[str, str], bool] = lambda _team, _member: False,
        *,
        judge: ProxyAddressJudge | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._box = box
        self._partitions = partitions
        self._marks = marks
        self._announce = announce
        self._computer_online = computer_online
        # The host's address policy for a proxy's own address; the launcher and the relay
        # judge it again at every connection.
        self.judge = judge or ProxyAddressJudge()
        self._repo = ProxyRepository()
        self._profiles = BrowserProfileRepository()
        self._lock = asyncio.Lock()

    async def list_proxies(self, team_id: str) -> list[ProxyStatus]:
        async with self._db.read() as conn:
            rows = await self._repo.list_proxies(conn, team_id)
            choices = await self._repo.profile_choices(conn, team_id)
        return self._statuses(team_id, rows, choices)

    async def profile_proxy_names(self, team_id: str) -> dict[str, str]:
        """``{profile id: proxy name}`` of the profiles that use a proxy: what a member sees."""
        async with self._db.read() as conn:
            rows = await self._repo.list_proxies(conn, team_id)
            choices = await self._repo.profile_choices(conn, team_id)
        names = _names(rows)
        return {profile: names[proxy] for profile, proxy in choices.items()}

    async def create_proxy(self, team_id: str, address_text: str) -> ProxyStatus:
        address = parse_proxy_address(address_text)
        await self.judge.check(address)
        proxy_id = PROXY_PREFIX + uuid.uuid4().hex
        now = self._clock.now()
        row = ProxyRow(
            id=proxy_id,
            team_id=team_id,
            kind="address",
            scheme=address.scheme,
            host=address.host,
            port=address.port,
            username=address.username,
            password=self._seal(team_id, proxy_id, address.password),
            member_id=None,
            label=None,
            created_at=now,
            updated_at=now,
        )
        async with self._lock, self._db.write() as conn:
            await self._check_room(conn, team_id)
            await self._repo.add_proxy(conn, row)
        log.info("browser proxy created", extra={"team_id": team_id, "proxy_id": proxy_id})
        self._changed(team_id)
        return await self._status_of(team_id, proxy_id)

    async def update_proxy(
        self,
        team_id: str,
        proxy_id: str,
        *,
        previous_address: str,
        address_text: str,
        keep_password: bool,
    ) -> ProxyStatus:
        """Saves a new address; ``previous_address`` is the one the form opened with.

        ``keep_password`` keeps the saved password (the form showed a mask); otherwise
        an address without a password removes it. A save that changes nothing closes no tabs.
        """
        address = parse_proxy_address(address_text)
        await self.judge.check(address)
        async with self._lock:
            async with self._db.write() as conn:
                row = await self._require(conn, team_id, proxy_id)
                if row.kind != "address":
                    raise InvalidArgument(
                        "a member's computer has no address to edit",
                        code="browserProxyComputerFixed",
                    )
                if _display(row) != previous_address.strip():
                    raise _changed_meanwhile()
                if keep_password and address.password is None:
                    password = row.password
                    in_clear = row.scheme == "https" and address.scheme != "https"
                    if password is not None and (row.host != address.host or in_clear):
                        refuse_moved("address", "the proxy's host or its encryption")
                else:
                    password = self._seal(team_id, proxy_id, address.password)
                same = _display(row) == address.display() and (
                    password is row.password or self._holds(row, address.password)
                )
                if not same:
                    await self._repo.update_proxy(
                        conn,
                        team_id,
                        proxy_id,
                        scheme=address.scheme,
                        host=address.host,
                        port=address.port,
                        username=address.username,
                        password=password,
                        updated_at=self._clock.now(),
                    )
                users = await self._users(conn, team_id, proxy_id)
            if not same:
                self._marks.forget(team_id, proxy_id)
                await self._close_profiles(team_id, users)
        if not same:
            log.info("browser proxy changed", extra={"team_id": team_id, "proxy_id": proxy_id})
            self._changed(team_id)
        return await self._status_of(team_id, proxy_id)

    async def delete_proxy(self, team_id: str, proxy_id: str, seen_profiles: Sequence[str]) -> None:
        """Deletes the proxy; its profiles become Automatic. ``seen_profiles`` are the
        profiles the question showed: any other set now is ``browserProxyChanged``."""
        async with self._lock:
            async with self._db.write() as conn:
                await self._require(conn, team_id, proxy_id)
                users = await self._users(conn, team_id, proxy_id)
                if set(users) != set(seen_profiles):
                    raise _changed_meanwhile()
                await self._repo.remove_proxy(conn, team_id, proxy_id)
            self._marks.forget(team_id, proxy_id)
            await self._close_profiles(team_id, users)
        log.info("browser proxy deleted", extra={"team_id": team_id, "proxy_id": proxy_id})
        self._changed(team_id)

    async def assign(self, team_id: str, profile: str, proxy_id: str | None) -> None:
        """The named ``profile`` uses ``proxy_id`` from now on (None: Automatic); its tabs
        close when that is a change. Shared and "only this agent" are always Automatic."""
        if profile in ("shared", "agent"):
            raise InvalidArgument(
                "the shared profile and 'only this agent' always use the automatic proxy",
                code="browserProxyAutomaticOnly",
                field="profile",
            )
        async with self._lock:
            async with self._db.write() as conn:
                if await self._profiles.get_profile(conn, team_id, profile) is None:
                    raise NotFound("no such browser profile", code="browserProfileNotFound")
                if proxy_id is not None:
                    await self._require(conn, team_id, proxy_id)
                current = await self._repo.get_profile_proxy(conn, team_id, profile)
                if (current.id if current else None) == proxy_id:
                    return
                await self._repo.set_profile_proxy(conn, team_id, profile, proxy_id)
            await self._close_profiles(team_id, [profile])
        self._changed(team_id)

    async def share_computer(self, team_id: str, member_id: str, label: str) -> ProxyStatus:
        """The member's computer as a proxy: its row, made on the first share."""
        label = label.strip()[:MAX_LABEL_LENGTH] or "a member's computer"
        async with self._lock, self._db.write() as conn:
            row = await self._repo.get_computer(conn, team_id, member_id)
            if row is None:
                await self._check_room(conn, team_id)
                now = self._clock.now()
                row = ProxyRow(
                    PROXY_PREFIX + uuid.uuid4().hex,
                    team_id,
                    "computer",
                    None,
                    None,
                    None,
                    None,
                    None,
                    member_id,
                    label,
                    now,
                    now,
                )
                await self._repo.add_proxy(conn, row)
            elif row.label != label:
                await self._repo.update_proxy(
                    conn, team_id, row.id, label=label, updated_at=self._clock.now()
                )
        self._changed(team_id)
        return await self._status_of(team_id, row.id)

    def status_changed(self, signal: ProxyStatusChanged | EgressOnline) -> None:
        """A proxy's mark changed, or a member's computer came online or went offline."""
        self._changed(signal.team_id)

    async def plan_for(self, team_id: str, profile_id: str) -> ProxyPlan | None:
        """The proxy a named profile's browser launches behind, password opened; None is
        Automatic. A password this host cannot open is an error: the tab does not open."""
        async with self._db.read() as conn:
            row = await self._repo.get_profile_proxy(conn, team_id, profile_id)
            rows = await self._repo.list_proxies(conn, team_id) if row is not None else []
        if row is None:
            return None
        name = _names(rows)[row.id]
        if row.kind == "computer":
            return ProxyPlan(team_id, row.id, name, "computer", member_id=row.member_id)
        try:
            password = self._open(row)
        except SecretUnreadable as exc:
            raise Conflict(
                f"the password of proxy {name} cannot be opened on this host: {exc.reason}",
                code="browserProxyPasswordUnusable",
            ) from exc
        return ProxyPlan(team_id, row.id, name, "address", address=_address(row, password))

    # -- inside ------------------------------------------------------------------------

    async def _check_room(self, conn: AsyncConnection, team_id: str) -> None:
        if len(await self._repo.list_proxies(conn, team_id)) >= MAX_PROXIES:
            raise Conflict(
                f"a team may have at most {MAX_PROXIES} proxies", code="browserProxyLimit"
            )

    async def _require(self, conn: AsyncConnection, team_id: str, proxy_id: str) -> ProxyRow:
        row = await self._repo.get_proxy(conn, team_id, proxy_id)
        if row is None:
            raise NotFound("no such proxy", code="browserProxyNotFound")
        return row

    async def _users(self, conn: AsyncConnection, team_id: str, proxy_id: str) -> list[str]:
        choices = await self._repo.profile_choices(conn, team_id)
        return [profile for profile, proxy in choices.items() if proxy == proxy_id]

    async def _close_profiles(self, team_id: str, profiles: Sequence[str]) -> None:
        for profile in profiles:
            await self._partitions.close_partition(team_id, Partition.profile(profile))

    async def _status_of(self, team_id: str, proxy_id: str) -> ProxyStatus:
        for status in await self.list_proxies(team_id):
            if status.id == proxy_id:
                return status
        raise NotFound("no such proxy", code="browserProxyNotFound")

    def _statuses(
        self, team_id: str, rows: list[ProxyRow], choices: dict[str, str]
    ) -> list[ProxyStatus]:
        names = _names(rows)
        statuses = []
        for row in rows:
            status: str | None = self._marks.get(team_id, row.id)
            if row.kind == "computer" and not self._computer_online(team_id, row.member_id or ""):
                status = "offline"
            statuses.append(
                ProxyStatus(
                    id=row.id,
                    kind=row.kind,
                    name=names[row.id],
                    address=_display(row),
                    password_set=row.password is not None,
                    member_id=row.member_id,
                    profiles=tuple(p for p, proxy in choices.items() if proxy == row.id),
                    status=status,
                )
            )
        return statuses

    def _seal(self, team_id: str, proxy_id: str, password: str | None) -> bytes | None:
        if password is None:
            return None
        return self._box.encrypt(
            password.encode("utf-8"), PROXY_PASSWORD.binding(team_id, proxy_id)
        )

    def _open(self, row: ProxyRow) -> str | None:
        if row.password is None:
            return None
        binding = PROXY_PASSWORD.binding(row.team_id, row.id)
        return self._box.decrypt(row.password, binding).decode("utf-8")

    def _holds(self, row: ProxyRow, password: str | None) -> bool:
        """Whether ``row``'s saved password is ``password``."""
        try:
            return self._open(row) == password
        except SecretUnreadable:
            # Not openable here (``browserProxyPasswordUnusable``): the save replaces it.
            return False

    def _changed(self, team_id: str) -> None:
        self._announce(team_id, BrowserProfilesChanged())


def _display(row: ProxyRow) -> str | None:
    return None if row.kind != "address" else _address(row, None).display()


def _address(row: ProxyRow, password: str | None) -> ProxyAddress:
    if row.scheme is None or row.host is None or row.port is None:
        raise Internal("the stored proxy has no address")
    return ProxyAddress(row.scheme, row.host, row.port, row.username, password)


def _names(rows: list[ProxyRow]) -> dict[str, str]:
    addresses = [
        NamedAddress(r.id, r.scheme or "", r.host or "", r.port or 0, r.username)
        for r in rows
        if r.kind == "address"
    ]
    names = proxy_names(addresses)
    for row in rows:
        if row.kind == "computer":
            names[row.id] = f"computer: {row.label}"
    return names


def _changed_meanwhile() -> Conflict:
    return Conflict(
        "the proxy changed since it was shown; look at it again", code="browserProxyChanged"
    )
