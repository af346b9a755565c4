"""steps recorded while a person holds an agent's tab, and each team's choice to record them

Revision ID: 0013
Revises: 0011
Create Date: 2026-12-02 02:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "browsing_memory_settings",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_browsing_memory_settings")),
    )
    op.create_table(
        "browsing_steps",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("line", sa.String(length=1000), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_browsing_steps")),
    )
    op.create_index(
        op.f("ix_browsing_steps_team_id_agent_id_created_at"),
        "browsing_steps",
        ["team_id", "agent_id", "created_at"],
    )


def downgrade() -> None:
    op.drop_index(
        op.f("ix_browsing_steps_team_id_agent_id_created_at"), table_name="browsing_steps"
    )
    op.drop_table("browsing_steps")
    op.drop_table("browsing_memory_settings")
