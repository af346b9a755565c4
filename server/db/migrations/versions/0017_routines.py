"""routines and their runs

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03 20:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = sa.Float(precision=53)


def upgrade() -> None:
    op.create_table(
        "routines",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("created_by", ID, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("schedule", sa.Text(), nullable=False),
        sa.Column("thread_policy", sa.String(length=16), nullable=False),
        sa.Column("thread_id", ID, nullable=True),
        sa.Column("audience", sa.String(length=16), nullable=False),
        sa.Column("audience_members", sa.Text(), server_default="[]", nullable=False),
        sa.Column("approvers", sa.Text(), server_default="[]", nullable=False),
        sa.Column("approval_seconds", sa.Integer(), server_default="86400", nullable=False),
        sa.Column("overlap", sa.String(length=16), nullable=False),
        sa.Column("missed", sa.String(length=16), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("next_fire_at", TIME, nullable=True),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_routines")),
    )
    op.create_index(op.f("ix_routines_team_id_agent_id"), "routines", ["team_id", "agent_id"])
    op.create_index(
        op.f("ix_routines_enabled_next_fire_at"), "routines", ["enabled", "next_fire_at"]
    )
    op.create_table(
        "routine_runs",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("due_at", TIME, nullable=True),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("started_at", TIME, nullable=True),
        sa.Column("ended_at", TIME, nullable=True),
        sa.Column("started_by", ID, nullable=True),
        sa.Column("thread_id", ID, nullable=True),
        sa.Column("turn_id", ID, nullable=True),
        sa.Column("delivery_id", sa.String(length=100), nullable=True),
        sa.Column("body", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_routine_runs")),
        sa.UniqueConstraint("delivery_id", name=op.f("uq_routine_runs_delivery_id")),
    )
    op.create_index(
        op.f("ix_routine_runs_team_id_routine_id_created_at"),
        "routine_runs",
        ["team_id", "routine_id", "created_at"],
    )
    op.create_index(op.f("ix_routine_runs_status"), "routine_runs", ["status"])


def downgrade() -> None:
    op.drop_index(op.f("ix_routine_runs_status"), table_name="routine_runs")
    op.drop_index(op.f("ix_routine_runs_team_id_routine_id_created_at"), table_name="routine_runs")
    op.drop_table("routine_runs")
    op.drop_index(op.f("ix_routines_enabled_next_fire_at"), table_name="routines")
    op.drop_index(op.f("ix_routines_team_id_agent_id"), table_name="routines")
    op.drop_table("routines")
