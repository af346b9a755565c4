"""The registry of hosts: enrolment, the built-in host, listing and removal."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.clock import Clock
from server.common.errors import Conflict, NotFound, Unauthenticated
from server.common.keys import SigningKey, b64decode, b64encode
from server.common.roles import Role
from server.common.tokens import hash_secret, new_id, new_secret
from server.db.engine import Database
from server.hub.services.access_changes import AccessChanges
from server.hub.storage.hooks import HubHookRepository
from server.hub.storage.hosts import Enrolment, Host, HostRepository
from server.hub.storage.teams import TeamRepository

ENROLMENT_SECONDS = 3600
# The least role that makes enrolment codes; a code works only while its maker still has it.
ENROLMENT_ROLE = Role.OWNER


@dataclass(frozen=True, slots=True)
class NewEnrolment:
    code: str
    expires_at: float


class HostService:
    """Hosts a team can reach. The built-in host of ``crewhost serve`` serves every team."""

    def __init__(
        self, db: Database, clock: Clock, changes: AccessChanges, *, link_lease: float = 60.0
    ) -> None:
        self._db = db
        self._clock = clock
        self._changes = changes
        self.link_lease = link_lease
        self._hosts = HostRepository()
        self._teams = TeamRepository()

    async def list_hosts(self, team_id: str) -> list[Host]:
        async with self._db.read() as conn:
            return await self._hosts.list_team_hosts(conn, team_id)

    async def get_team_host(self, team_id: str, host_id: str) -> Host:
        async with self._db.read() as conn:
            host = await self._hosts.get_team_host(conn, team_id, host_id)
        if host is None:
            raise NotFound("no such host", code="hostNotFound")
        return host

    async def get_host_for_link(self, host_id: str) -> Host | None:
        async with self._db.read() as conn:
            return await self._hosts.get_host_for_link(conn, host_id)

    async def register_builtin(self, public_key: str, name: str) -> Host:
        """The built-in host's row, made on its first start and found by its key after."""
        async with self._db.write() as conn:
            host = await self._hosts.get_builtin_host(conn, public_key)
            if host is None:
                host = Host(new_id(), None, name, public_key, True, self._clock.now(), None)
                await self._hosts.add_host(conn, host)
        return host

    async def create_enrolment(self, team_id: str, actor_id: str, name: str) -> NewEnrolment:
        code = new_secret()
        expires_at = self._clock.now() + ENROLMENT_SECONDS
        async with self._db.write() as conn:
            await self._hosts.add_enrolment(
                conn,
                Enrolment(new_id(), team_id, name, expires_at),
                hash_secret(code),
                actor_id,
                self._clock.now(),
            )
        return NewEnrolment(code, expires_at)

    async def enrol(self, code: str, public_key: str) -> Host:
        """Spend a code and register the host that presents it with its public key."""
        try:
            raw_key = b64decode(public_key)
        except ValueError:
            raw_key = b""
        if len(raw_key) != 32:
            raise Unauthenticated("the public key is not an Ed25519 key", code="invalidHostKey")
        try:
            async with self._db.write() as conn:
                enrolment = await self._hosts.take_enrolment(conn, hash_secret(code))
                if enrolment is None or enrolment.expires_at <= self._clock.now():
                    raise Unauthenticated(
                        "the enrolment code is not valid", code="enrolmentInvalid"
                    )
                if not await self._maker_may_enrol(conn, enrolment):
                    raise Unauthenticated(
                        "the enrolment code is not valid: the person who made it can no longer"
                        " add hosts to the team",
                        code="enrolmentInvalid",
                    )
                host = Host(
                    new_id(),
                    enrolment.team_id,
                    enrolment.name,
                    b64encode(raw_key),
                    False,
                    self._clock.now(),
                    None,
                )
                await self._hosts.add_host(conn, host)
        except IntegrityError as exc:
            raise Conflict("this host key is enrolled already", code="hostKeyTaken") from exc
        return host

    async def _maker_may_enrol(self, conn: AsyncConnection, enrolment: Enrolment) -> bool:
        """Whether the code's maker may still make codes in its team (read in the spending
        transaction, so a removal or demotion that committed first is seen)."""
        if enrolment.created_by is None:
            return False
        await self._teams.lock_team(conn, enrolment.team_id)  # waits for a change under way
        role = await self._teams.get_role(conn, enrolment.team_id, enrolment.created_by)
        return role is not None and role.at_least(ENROLMENT_ROLE)

    async def remove_host(self, team_id: str, host_id: str) -> None:
        async with self._db.write() as conn:
            if not await self._hosts.remove_team_host(conn, team_id, host_id):
                raise NotFound(
                    "no such host (the built-in host cannot be removed)", code="hostNotFound"
                )
            # Its webhook triggers go with it: their senders are answered 404 from now on.
            await HubHookRepository().remove_host_hooks(conn, team_id, host_id)
        await self._changes.host_removed(host_id)

    def is_online(self, host: Host) -> bool:
        """Linked to some hub, and that hub renewed the link within the lease."""
        return host.linked_at is not None and host.linked_at > self._clock.now() - self.link_lease

    async def renew_links(self, host_ids: list[str], holder: str) -> None:
        """The hub instance ``holder`` still holds these links: those it holds stay online
        for another lease."""
        if host_ids:
            async with self._db.write() as conn:
                await self._hosts.renew_links(conn, host_ids, holder, self._clock.now())

    async def forget_links(self) -> None:
        """Every host is offline until it links again: for a hub alone at its start, whose
        links of its last run ended with it (a kill leaves them marked linked)."""
        async with self._db.write() as conn:
            await self._hosts.remove_links(conn)

    async def add_link(self, host_id: str, holder: str) -> None:
        """The hub instance ``holder`` holds the host's link now."""
        async with self._db.write() as conn:
            await self._hosts.add_link(conn, host_id, holder, self._clock.now())

    async def remove_link(self, host_id: str, holder: str) -> bool:
        """The link ``holder`` held ended. A host that relinked through another instance
        meanwhile stays online: that instance holds it. True if the host went offline."""
        async with self._db.write() as conn:
            return await self._hosts.remove_link(conn, host_id, holder)

    async def ticket_key(self) -> SigningKey:
        """The hub's ticket key, shared by every hub instance through the database."""
        async with self._db.read() as conn:
            stored = await self._hosts.get_hub_key(conn)
        if stored is None:
            fresh = SigningKey.generate()
            try:
                async with self._db.write() as conn:
                    await self._hosts.add_hub_key(
                        conn, b64encode(fresh.private_bytes()), self._clock.now()
                    )
            except IntegrityError:
                pass  # another instance made it first; use theirs
            async with self._db.read() as conn:
                stored = await self._hosts.get_hub_key(conn)
        assert stored is not None
        return SigningKey.from_bytes(b64decode(stored))
