"""durable attention requests, the message queue and read cursors

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03 20:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "attention_requests",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("routine_id", sa.String(length=32), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("tool", sa.String(length=100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("addressed_to", sa.Text(), nullable=True),
        sa.Column("whole_team", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("expires_at", sa.Float(precision=53), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("answered_by", sa.String(length=32), nullable=True),
        sa.Column("resolved_at", sa.Float(precision=53), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attention_requests")),
    )
    with op.batch_alter_table("attention_requests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_attention_requests_team_id_status"), ["team_id", "status"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_attention_requests_team_id_thread_id"),
            ["team_id", "thread_id"],
            unique=False,
        )
    op.create_table(
        "queued_messages",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("attachments", sa.Text(), nullable=False),
        sa.Column("steer", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queued_messages")),
    )
    with op.batch_alter_table("queued_messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_queued_messages_team_id_thread_id_created_at"),
            ["team_id", "thread_id", "created_at"],
            unique=False,
        )
    op.create_table(
        "thread_read_cursors",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("thread_id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("read_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("thread_id", "account_id", name=op.f("pk_thread_read_cursors")),
    )
    with op.batch_alter_table("thread_read_cursors", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_thread_read_cursors_team_id_account_id"),
            ["team_id", "account_id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("thread_read_cursors", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_thread_read_cursors_team_id_account_id"))
    op.drop_table("thread_read_cursors")
    with op.batch_alter_table("queued_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_queued_messages_team_id_thread_id_created_at"))
    op.drop_table("queued_messages")
    with op.batch_alter_table("attention_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attention_requests_team_id_thread_id"))
        batch_op.drop_index(batch_op.f("ix_attention_requests_team_id_status"))
    op.drop_table("attention_requests")
