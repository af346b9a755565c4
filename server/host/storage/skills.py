"""A team's skills, their versions and files, and the skills enabled per agent: the rows of
``skills``, ``skill_versions``, ``skill_files`` and ``agent_skills``, one team at a time."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.db.engine import Database
from server.db.lookups import Lookup
from server.db.tables import agent_skills, skill_files, skill_versions, skills

STATE_DRAFT = "draft"
STATE_SAVED = "saved"


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill as the list shows it; ``version`` is the newest, the one agents read."""

    id: str
    team_id: str
    name: str
    description: str
    state: str
    version: int
    created_at: float
    created_by: str | None
    updated_at: float
    updated_by: str | None
    source_agent_id: str | None
    source_thread_id: str | None


@dataclass(frozen=True, slots=True)
class SkillVersion:
    """One save of a skill: what changed, how many files and bytes, who and when."""

    skill_id: str
    version: int
    team_id: str
    description: str
    change: str
    reverted_from: int | None
    files: int
    size: int
    created_at: float
    created_by: str | None


@dataclass(frozen=True, slots=True)
class EnabledSkill:
    """A saved skill enabled for an agent: what its system prompt lists."""

    skill_id: str
    name: str
    description: str


_SKILL = tuple(skills.c[name] for name in Skill.__slots__)

# The saved skill of a name an agent has: its id, newest version, SKILL.md and other paths.
_ENABLED_SKILL = Lookup(
    sa.select(skills.c.id, skills.c.version, skills.c.skill_md, skills.c.paths)
    .join(
        agent_skills,
        sa.and_(agent_skills.c.skill_id == skills.c.id, agent_skills.c.team_id == skills.c.team_id),
    )
    .where(
        skills.c.team_id == sa.bindparam("team_id", type_=sa.String),
        skills.c.name == sa.bindparam("name", type_=sa.String),
        skills.c.state == sa.bindparam("state", type_=sa.String),
        agent_skills.c.agent_id == sa.bindparam("agent_id", type_=sa.String),
    )
)


@dataclass(frozen=True, slots=True)
class AgentSkillText:
    """What ``load_skill`` reads of a skill the agent has, in one lookup."""

    skill_id: str
    version: int
    skill_md: str
    paths: list[str]


class SkillRepository:
    """Reads and writes of skills; every one names the team."""

    async def list_skills(self, conn: AsyncConnection, team_id: str) -> list[Skill]:
        result = await conn.execute(
            sa.select(*_SKILL).where(skills.c.team_id == team_id).order_by(skills.c.name)
        )
        return [Skill(**row._mapping) for row in result]

    async def get_skill_by_name(
        self, conn: AsyncConnection, team_id: str, name: str, *, for_update: bool = False
    ) -> Skill | None:
        """The skill of that name; ``for_update`` locks its row until the transaction ends
        (on PostgreSQL: SQLite's writes are one at a time already)."""
        query = sa.select(*_SKILL).where(skills.c.team_id == team_id, skills.c.name == name)
        result = await conn.execute(query.with_for_update() if for_update else query)
        row = result.first()
        return None if row is None else Skill(**row._mapping)

    async def add_skill(
        self, conn: AsyncConnection, skill: Skill, skill_md: str, paths: list[str]
    ) -> None:
        await conn.execute(
            sa.insert(skills).values(**_values(skill), skill_md=skill_md, paths=json.dumps(paths))
        )

    async def update_skill(
        self, conn: AsyncConnection, team_id: str, skill_id: str, **changes: Any
    ) -> None:
        await conn.execute(
            sa.update(skills)
            .where(skills.c.team_id == team_id, skills.c.id == skill_id)
            .values(**changes)
        )

    async def remove_skill(self, conn: AsyncConnection, team_id: str, skill_id: str) -> None:
        for table in (agent_skills, skill_files, skill_versions):
            await conn.execute(
                sa.delete(table).where(table.c.team_id == team_id, table.c.skill_id == skill_id)
            )
        await conn.execute(
            sa.delete(skills).where(skills.c.team_id == team_id, skills.c.id == skill_id)
        )

    async def add_version(
        self, conn: AsyncConnection, version: SkillVersion, files: Mapping[str, bytes]
    ) -> None:
        await conn.execute(sa.insert(skill_versions).values(**_values(version)))
        if files:
            await conn.execute(
                sa.insert(skill_files),
                [
                    {
                        "team_id": version.team_id,
                        "skill_id": version.skill_id,
                        "version": version.version,
                        "path": path,
                        "data": data,
                    }
                    for path, data in files.items()
                ],
            )

    async def list_versions(
        self, conn: AsyncConnection, team_id: str, skill_id: str
    ) -> list[SkillVersion]:
        result = await conn.execute(
            sa.select(skill_versions)
            .where(skill_versions.c.team_id == team_id, skill_versions.c.skill_id == skill_id)
            .order_by(skill_versions.c.version.desc())
        )
        return [SkillVersion(**row._mapping) for row in result]

    async def get_files(
        self, conn: AsyncConnection, team_id: str, skill_id: str, version: int
    ) -> dict[str, bytes] | None:
        """Every file of one version by path; None when there is no such version."""
        found = await conn.execute(
            sa.select(skill_versions.c.version).where(
                skill_versions.c.team_id == team_id,
                skill_versions.c.skill_id == skill_id,
                skill_versions.c.version == version,
            )
        )
        if found.first() is None:
            return None
        result = await conn.execute(
            sa.select(skill_files.c.path, skill_files.c.data)
            .where(
                skill_files.c.team_id == team_id,
                skill_files.c.skill_id == skill_id,
                skill_files.c.version == version,
            )
            .order_by(skill_files.c.path)
        )
        return {row.path: bytes(row.data) for row in result}

    async def get_file(
        self, conn: AsyncConnection, team_id: str, skill_id: str, version: int, path: str
    ) -> bytes | None:
        result = await conn.execute(
            sa.select(skill_files.c.data).where(
                skill_files.c.team_id == team_id,
                skill_files.c.skill_id == skill_id,
                skill_files.c.version == version,
                skill_files.c.path == path,
            )
        )
        row = result.first()
        return None if row is None else bytes(row.data)

    async def add_agent_skill(
        self,
        conn: AsyncConnection,
        team_id: str,
        agent_id: str,
        skill_id: str,
        at: float,
        by: str | None,
    ) -> bool:
        """Enable the skill for the agent; False when it was already."""
        found = await conn.execute(
            sa.select(agent_skills.c.skill_id).where(
                agent_skills.c.team_id == team_id,
                agent_skills.c.agent_id == agent_id,
                agent_skills.c.skill_id == skill_id,
            )
        )
        if found.first() is not None:
            return False
        await conn.execute(
            sa.insert(agent_skills).values(
                team_id=team_id, agent_id=agent_id, skill_id=skill_id, enabled_at=at, enabled_by=by
            )
        )
        return True

    async def remove_agent_skill(
        self, conn: AsyncConnection, team_id: str, agent_id: str, skill_id: str
    ) -> bool:
        result = await conn.execute(
            sa.delete(agent_skills).where(
                agent_skills.c.team_id == team_id,
                agent_skills.c.agent_id == agent_id,
                agent_skills.c.skill_id == skill_id,
            )
        )
        return bool(result.rowcount)

    async def remove_agent_skills(self, conn: AsyncConnection, team_id: str, agent_id: str) -> None:
        await conn.execute(
            sa.delete(agent_skills).where(
                agent_skills.c.team_id == team_id, agent_skills.c.agent_id == agent_id
            )
        )

    async def list_enabled(
        self, conn: AsyncConnection, team_id: str, agent_id: str
    ) -> list[EnabledSkill]:
        """The saved skills enabled for the agent, by name (drafts are never listed)."""
        result = await conn.execute(
            sa.select(skills.c.id, skills.c.name, skills.c.description)
            .join(
                agent_skills,
                sa.and_(
                    agent_skills.c.skill_id == skills.c.id,
                    agent_skills.c.team_id == skills.c.team_id,
                ),
            )
            .where(
                skills.c.team_id == team_id,
                agent_skills.c.agent_id == agent_id,
                skills.c.state == STATE_SAVED,
            )
            .order_by(skills.c.name)
        )
        return [EnabledSkill(row.id, row.name, row.description) for row in result]

    async def get_enabled_skill(
        self, db: Database, team_id: str, agent_id: str, name: str
    ) -> AgentSkillText | None:
        """The saved skill ``name`` the agent has (a lookup); None when it has no such skill
        (or it is a draft)."""
        for row in await db.lookup(
            _ENABLED_SKILL, team_id=team_id, agent_id=agent_id, name=name, state=STATE_SAVED
        ):
            return AgentSkillText(row[0], row[1], row[2], json.loads(row[3]))
        return None

    async def list_agents_of_skill(
        self, conn: AsyncConnection, team_id: str, skill_id: str
    ) -> list[str]:
        result = await conn.execute(
            sa.select(agent_skills.c.agent_id)
            .where(agent_skills.c.team_id == team_id, agent_skills.c.skill_id == skill_id)
            .order_by(agent_skills.c.agent_id)
        )
        return [row.agent_id for row in result]


def _values(row: Skill | SkillVersion) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__slots__}
