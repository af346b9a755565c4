"""agents' settings, threads, their messages and turns

Revision ID: 0006
Revises: 0004
Create Date: 2026-12-01 08:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents", schema=None) as batch_op:
        batch_op.add_column(sa.Column("instructions", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(
            sa.Column("provider", sa.String(length=40), nullable=False, server_default="anthropic")
        )
        batch_op.add_column(sa.Column("model", sa.String(length=200), nullable=True))
        batch_op.add_column(
            sa.Column("permissions", sa.Text(), nullable=False, server_default="{}")
        )
        batch_op.add_column(sa.Column("max_tool_calls", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("updated_at", sa.Float(precision=53), nullable=True))
    op.create_table(
        "threads",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_threads")),
    )
    with op.batch_alter_table("threads", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_threads_team_id_agent_id"), ["team_id", "agent_id"], unique=False
        )
    op.create_table(
        "thread_messages",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_thread_messages")),
        sa.UniqueConstraint("thread_id", "seq", name=op.f("uq_thread_messages_thread_id_seq")),
    )
    with op.batch_alter_table("thread_messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_thread_messages_team_id_thread_id"),
            ["team_id", "thread_id"],
            unique=False,
        )
    op.create_table(
        "turns",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("tool_calls", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.Float(precision=53), nullable=False),
        sa.Column("ended_at", sa.Float(precision=53), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turns")),
    )
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_turns_team_id_thread_id"), ["team_id", "thread_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("turns")
    op.drop_table("thread_messages")
    op.drop_table("threads")
    with op.batch_alter_table("agents", schema=None) as batch_op:
        for column in (
            "updated_at",
            "max_tool_calls",
            "permissions",
            "model",
            "provider",
            "instructions",
        ):
            batch_op.drop_column(column)
