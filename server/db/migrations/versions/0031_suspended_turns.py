"""suspended_turns: turns a stopping host put aside while they waited for consent

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-06 16:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = sa.Float(precision=53)


def upgrade() -> None:
    op.create_table(
        "suspended_turns",
        sa.Column("turn_id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("thread_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("request_id", ID, nullable=False),
        sa.Column("call_id", sa.String(length=100), nullable=False),
        sa.Column("started_by", ID, nullable=True),
        sa.Column("approvers", sa.Text(), nullable=True),
        sa.Column("attention_seconds", TIME, nullable=True),
        sa.Column("routine_id", ID, nullable=True),
        sa.Column("suspended_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("turn_id", name=op.f("pk_suspended_turns")),
    )
    op.create_index(
        op.f("ix_suspended_turns_team_id_thread_id"),
        "suspended_turns",
        ["team_id", "thread_id"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_suspended_turns_team_id_thread_id"), table_name="suspended_turns")
    op.drop_table("suspended_turns")
