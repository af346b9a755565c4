"""skills: a team's skill folders, their versions and files, and the skills of each agent

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-04 03:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = sa.Float(precision=53)


def upgrade() -> None:
    op.create_table(
        "skills",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.Column("updated_at", TIME, nullable=False),
        sa.Column("updated_by", ID, nullable=True),
        sa.Column("source_agent_id", ID, nullable=True),
        sa.Column("source_thread_id", ID, nullable=True),
        sa.Column("skill_md", sa.Text(), nullable=False),
        sa.Column("paths", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_skills")),
        sa.UniqueConstraint("team_id", "name", name=op.f("uq_skills_team_id_name")),
    )
    op.create_table(
        "skill_versions",
        sa.Column("skill_id", ID, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("change", sa.String(length=16), nullable=False),
        sa.Column("reverted_from", sa.Integer(), nullable=True),
        sa.Column("files", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("created_by", ID, nullable=True),
        sa.PrimaryKeyConstraint("skill_id", "version", name=op.f("pk_skill_versions")),
    )
    op.create_index(
        op.f("ix_skill_versions_team_id_skill_id"),
        "skill_versions",
        ["team_id", "skill_id"],
        unique=False,
    )
    op.create_table(
        "skill_files",
        sa.Column("skill_id", ID, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=255), nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("skill_id", "version", "path", name=op.f("pk_skill_files")),
    )
    op.create_index(
        op.f("ix_skill_files_team_id_skill_id_version"),
        "skill_files",
        ["team_id", "skill_id", "version"],
        unique=False,
    )
    op.create_table(
        "agent_skills",
        sa.Column("team_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("skill_id", ID, nullable=False),
        sa.Column("enabled_at", TIME, nullable=False),
        sa.Column("enabled_by", ID, nullable=True),
        sa.PrimaryKeyConstraint("team_id", "agent_id", "skill_id", name=op.f("pk_agent_skills")),
    )
    op.create_index(
        op.f("ix_agent_skills_team_id_skill_id"),
        "agent_skills",
        ["team_id", "skill_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_agent_skills_team_id_skill_id"), table_name="agent_skills")
    op.drop_table("agent_skills")
    op.drop_index(op.f("ix_skill_files_team_id_skill_id_version"), table_name="skill_files")
    op.drop_table("skill_files")
    op.drop_index(op.f("ix_skill_versions_team_id_skill_id"), table_name="skill_versions")
    op.drop_table("skill_versions")
    op.drop_table("skills")
