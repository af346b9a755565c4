"""Browser profiles: named persistent partitions a team's agents can share.

Owners and admins change them; every change is announced to the team's peers
with ``browser-profiles-changed``. Clearing or deleting a profile closes its
tabs first; deleting one moves its agents to Shared. Creates and renames run one at a
time: the profile limit and the unique name (casefolded) are checked before a write.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from sqlalchemy.exc import IntegrityError

from server.common.clock import Clock
from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.protocol.events import BrowserProfilesChanged, HostEvent
from server.db.engine import Database
from server.host.browser.partitions import Partition, new_profile_id
from server.host.storage.agents import AgentBrowserChoice, AgentRepository
from server.host.storage.profiles import BrowserProfile, BrowserProfileRepository

# The hues of agent avatars; a profile takes one of them.
PROFILE_HUES = (4, 28, 48, 96, 148, 176, 204, 232, 268, 320)
MAX_PROFILES = 100


class PartitionControl(Protocol):
    """What the service needs of the browser engine."""

    async def close_partition(self, team_id: str, partition: Partition) -> None: ...
    async def clear_partition(self, team_id: str, partition: Partition) -> None: ...
    async def close_agent_tabs(self, team_id: str, agent_id: str) -> None: ...
    def profile_added(self, team_id: str, profile_id: str) -> None: ...
    def profile_removed(self, team_id: str, profile_id: str) -> None: ...


def next_hue(profiles: list[BrowserProfile]) -> int:
    """The hue the fewest profiles use (the first such in palette order)."""
    used = Counter(p.hue for p in profiles)
    return min(PROFILE_HUES, key=lambda hue: used[hue])


class BrowserProfileService:
    """List, create, update, clear, delete and assign a team's browser profiles."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        partitions: PartitionControl,
        announce: Callable[[str, HostEvent], None],
    ) -> None:
        self._db = db
        self._clock = clock
        self._partitions = partitions
        self._announce = announce
        self._repo = BrowserProfileRepository()
        self._agents = AgentRepository()
        # The limit and the casefolded name are checked, then written: one such change at a time.
        self._lock = asyncio.Lock()

    async def list_profiles(self, team_id: str) -> list[BrowserProfile]:
        async with self._db.read() as conn:
            return await self._repo.list_profiles(conn, team_id)

    async def create_profile(self, team_id: str, name: str) -> BrowserProfile:
        try:
            async with self._lock, self._db.write() as conn:
                existing = await self._repo.list_profiles(conn, team_id)
                if len(existing) >= MAX_PROFILES:
                    raise Conflict(
                        f"a team may have at most {MAX_PROFILES} browser profiles",
                        code="browserProfileLimit",
                    )
                self._check_name_free(existing, name, None)
                profile = BrowserProfile(
                    new_profile_id(), team_id, name, next_hue(existing), self._clock.now()
                )
                await self._repo.add_profile(conn, profile)
        except IntegrityError as exc:
            raise self._name_taken(name) from exc
        self._partitions.profile_added(team_id, profile.id)
        self._changed(team_id)
        return profile

    async def update_profile(
        self, team_id: str, profile_id: str, *, name: str | None, hue: int | None
    ) -> BrowserProfile:
        if hue is not None and hue not in PROFILE_HUES:
            raise InvalidArgument(
                f"hue must be one of {', '.join(map(str, PROFILE_HUES))}", field="hue"
            )
        try:
            async with self._lock, self._db.write() as conn:
                profile = await self._require(conn, team_id, profile_id)
                if name is not None:
                    self._check_name_free(
                        await self._repo.list_profiles(conn, team_id), name, profile_id
                    )
                updated = BrowserProfile(
                    profile.id,
                    team_id,
                    name if name is not None else profile.name,
                    hue if hue is not None else profile.hue,
                    profile.created_at,
                )
                await self._repo.update_profile(
                    conn, team_id, profile_id, name=updated.name, hue=updated.hue
                )
        except IntegrityError as exc:
            raise self._name_taken(name or "") from exc
        self._changed(team_id)
        return updated

    async def clear_profile(self, team_id: str, profile_id: str) -> None:
        """Close the profile's tabs, then clear its cookies, storage and cache."""
        async with self._db.read() as conn:
            await self._require(conn, team_id, profile_id)
        await self._partitions.clear_partition(team_id, Partition.profile(profile_id))
        self._changed(team_id)

    async def delete_profile(self, team_id: str, profile_id: str) -> None:
        """Close its tabs, clear its data, move its agents to Shared, and forget it."""
        async with self._db.read() as conn:
            await self._require(conn, team_id, profile_id)
        # Refused from here on: no tab can open in it while its data goes.
        self._partitions.profile_removed(team_id, profile_id)
        await self._partitions.clear_partition(team_id, Partition.profile(profile_id))
        async with self._db.write() as conn:
            await self._agents.update_agents_of_profile_to_shared(conn, team_id, profile_id)
            await self._repo.remove_profile(conn, team_id, profile_id)
        self._changed(team_id)

    async def assign(self, team_id: str, agent_id: str, choice: str) -> AgentBrowserChoice:
        """Set where an agent's new tabs open: ``shared``, ``agent`` or a profile id.

        The agent's open tabs close (a tab keeps its partition for its life); both
        partitions keep their data.
        """
        async with self._db.write() as conn:
            agent = await self._agents.get_agent(conn, team_id, agent_id)
            if agent is None:
                raise NotFound("no such agent", code="agentNotFound")
            profile_id = None
            if choice not in ("shared", "agent"):
                profile_id = (await self._require(conn, team_id, choice)).id
            own = choice != "shared"
            await self._agents.update_agent_profile(
                conn, team_id, agent_id, own_browser_session=own, browser_profile_id=profile_id
            )
        # A tab keeps its partition for life: the agent's open tabs close; both profiles keep data.
        await self._partitions.close_agent_tabs(team_id, agent_id)
        self._changed(team_id)
        return AgentBrowserChoice(agent.id, team_id, agent.name, own, profile_id)

    async def agent_deleted(self, team_id: str, agent_id: str) -> None:
        """An agent is gone: close its tabs and clear its own partition."""
        await self._partitions.close_agent_tabs(team_id, agent_id)
        await self._partitions.clear_partition(team_id, Partition.for_agent(agent_id))

    async def partition_for_agent(self, team_id: str, agent_id: str) -> Partition:
        """Where the agent's next tab opens; a deleted profile is an error, never Shared."""
        async with self._db.read() as conn:
            agent = await self._agents.get_agent(conn, team_id, agent_id)
            if agent is None:
                raise NotFound("no such agent", code="agentNotFound")
            if agent.browser_profile_id is not None and (
                await self._repo.get_profile(conn, team_id, agent.browser_profile_id) is None
            ):
                raise NotFound(
                    "the agent's browser profile no longer exists",
                    code="browserProfileMissing",
                )
        partition = partition_of(agent)
        return partition if partition is not None else Partition.shared()

    async def profile_exists(self, team_id: str, profile_id: str) -> bool:
        async with self._db.read() as conn:
            return await self._repo.get_profile(conn, team_id, profile_id) is not None

    async def _require(self, conn: Any, team_id: str, profile_id: str) -> BrowserProfile:
        profile = await self._repo.get_profile(conn, team_id, profile_id)
        if profile is None:
            raise NotFound("no such browser profile", code="browserProfileNotFound")
        return profile

    def _check_name_free(
        self, profiles: list[BrowserProfile], name: str, except_id: str | None
    ) -> None:
        if any(p.name.casefold() == name.casefold() and p.id != except_id for p in profiles):
            raise self._name_taken(name)

    @staticmethod
    def _name_taken(name: str) -> Conflict:
        return Conflict(f"a browser profile named {name!r} exists", code="browserProfileNameTaken")

    def _changed(self, team_id: str) -> None:
        self._announce(team_id, BrowserProfilesChanged())


def duplicate_choice(
    source: AgentBrowserChoice, *, imported: bool = False
) -> tuple[bool, str | None]:
    """``(own_browser_session, browser_profile_id)`` of a copy of ``source``.

    A duplicate keeps a named profile (its sign-ins are the point of it); any other
    duplicate, and every import, starts in Shared, since "only this agent" would
    mean a new, empty partition.
    """
    if source.browser_profile_id is not None and not imported:
        return True, source.browser_profile_id
    return False, None


def partition_of(agent: AgentBrowserChoice) -> Partition | None:
    """The agent's chosen partition (None when that is Shared)."""
    if agent.browser_profile_id is not None:
        return Partition.profile(agent.browser_profile_id)
    if agent.own_browser_session:
        return Partition.for_agent(agent.id)
    return None
