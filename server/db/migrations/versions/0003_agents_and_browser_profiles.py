"""agents and browser profiles

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 00:35:42.638669
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("own_browser_session", sa.Boolean(), nullable=False),
        sa.Column("browser_profile_id", sa.String(length=40), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agents")),
    )
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agents_team_id"), ["team_id"], unique=False)

    op.create_table(
        "browser_profiles",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("hue", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_browser_profiles")),
        sa.UniqueConstraint("team_id", "name", name=op.f("uq_browser_profiles_team_id_name")),
    )


def downgrade() -> None:
    op.drop_table("browser_profiles")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agents_team_id"))

    op.drop_table("agents")
