"""agent memories: a member scope, pinning, use counts and where each came from

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03 14:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_COLUMNS = (
    "member_id",
    "pinned",
    "uses",
    "active_at",
    "updated_at",
    "updated_by",
    "source",
    "source_threads",
    "source_turn_id",
)


def upgrade() -> None:
    with op.batch_alter_table("agent_memories") as batch:
        batch.add_column(sa.Column("member_id", sa.String(length=32), nullable=True))
        batch.add_column(
            sa.Column("pinned", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("uses", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("active_at", sa.Float(precision=53), nullable=True))
        batch.add_column(sa.Column("updated_at", sa.Float(precision=53), nullable=True))
        batch.add_column(sa.Column("updated_by", sa.String(length=32), nullable=True))
        batch.add_column(
            sa.Column("source", sa.String(length=16), nullable=False, server_default="remember")
        )
        batch.add_column(
            sa.Column("source_threads", sa.Text(), nullable=False, server_default="[]")
        )
        batch.add_column(sa.Column("source_turn_id", sa.String(length=32), nullable=True))
    # Memories kept so far were the team's, last active when made.
    op.execute("UPDATE agent_memories SET active_at = created_at")


def downgrade() -> None:
    with op.batch_alter_table("agent_memories") as batch:
        for column in reversed(_COLUMNS):
            batch.drop_column(column)
