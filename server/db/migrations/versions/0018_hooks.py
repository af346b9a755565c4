"""webhook triggers: the hub's hooks and deliveries, the host's hooks and taken deliveries

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03 20:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = sa.Float(precision=53)


def upgrade() -> None:
    op.create_table(
        "hub_hooks",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("host_id", ID, nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("secret", sa.String(length=128), nullable=False),
        sa.Column("previous_secret", sa.String(length=128), nullable=True),
        sa.Column("previous_until", TIME, nullable=True),
        sa.Column("filters", sa.String(length=8192), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hub_hooks")),
    )
    op.create_index(op.f("ix_hub_hooks_host_id"), "hub_hooks", ["host_id"], unique=False)
    op.create_table(
        "hub_hook_deliveries",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("hook_id", ID, nullable=False),
        sa.Column("host_id", ID, nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("webhook_id", sa.String(length=256), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("received_at", TIME, nullable=False),
        sa.Column("delivered_at", TIME, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hub_hook_deliveries")),
        sa.UniqueConstraint(
            "hook_id", "webhook_id", name=op.f("uq_hub_hook_deliveries_hook_id_webhook_id")
        ),
    )
    op.create_index(
        op.f("ix_hub_hook_deliveries_host_id_status_received_at"),
        "hub_hook_deliveries",
        ["host_id", "status", "received_at"],
        unique=False,
    )
    op.create_index(
        op.f("ix_hub_hook_deliveries_received_at"),
        "hub_hook_deliveries",
        ["received_at"],
        unique=False,
    )
    op.create_table(
        "routine_hooks",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("created_by", ID, nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.Column("previous_secret", sa.LargeBinary(), nullable=True),
        sa.Column("previous_until", TIME, nullable=True),
        sa.Column("filters", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("rotated_at", TIME, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_routine_hooks")),
    )
    op.create_index(
        op.f("ix_routine_hooks_team_id_routine_id"),
        "routine_hooks",
        ["team_id", "routine_id"],
        unique=False,
    )
    op.create_table(
        "routine_hook_deliveries",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("hook_id", ID, nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("received_at", TIME, nullable=False),
        sa.Column("taken_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_routine_hook_deliveries")),
    )
    op.create_index(
        op.f("ix_routine_hook_deliveries_team_id_hook_id_taken_at"),
        "routine_hook_deliveries",
        ["team_id", "hook_id", "taken_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_table("routine_hook_deliveries")
    op.drop_table("routine_hooks")
    op.drop_table("hub_hook_deliveries")
    op.drop_table("hub_hooks")
