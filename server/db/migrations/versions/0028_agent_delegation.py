"""delegation between agents: whom each agent may ask, and the thread that asked

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-04 03:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        batch.add_column(sa.Column("may_ask", sa.JSON(), nullable=True))
    with op.batch_alter_table("threads") as batch:
        batch.add_column(sa.Column("parent_thread_id", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("parent_agent_id", sa.String(length=32), nullable=True))
    op.create_index(
        op.f("ix_threads_team_id_parent_thread_id"),
        "threads",
        ["team_id", "parent_thread_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_threads_team_id_parent_thread_id"), table_name="threads")
    with op.batch_alter_table("threads") as batch:
        batch.drop_column("parent_agent_id")
        batch.drop_column("parent_thread_id")
    with op.batch_alter_table("agents") as batch:
        batch.drop_column("may_ask")
