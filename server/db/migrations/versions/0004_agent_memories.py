"""agent memories

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 08:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_memories",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("site", sa.String(length=253), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_memories")),
    )
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_agent_memories_team_id_agent_id_site"),
            ["team_id", "agent_id", "site"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("agent_memories", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agent_memories_team_id_agent_id_site"))
    op.drop_table("agent_memories")
