"""team webhooks: endpoints (address token and signing secret sealed) and their deliveries

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03 20:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "team_webhooks",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("url_origin", sa.String(length=300), nullable=False),
        sa.Column("url_secret", sa.LargeBinary(), nullable=True),
        sa.Column("body_format", sa.String(length=16), nullable=False),
        sa.Column("kinds", sa.JSON(), nullable=False),
        sa.Column("signing_secret", sa.LargeBinary(), nullable=False),
        sa.Column("previous_signing_secret", sa.LargeBinary(), nullable=True),
        sa.Column("previous_secret_until", sa.Float(precision=53), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_webhooks")),
    )
    op.create_index(
        op.f("ix_team_webhooks_team_id_created_at"),
        "team_webhooks",
        ["team_id", "created_at"],
    )
    op.create_table(
        "team_webhook_deliveries",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("webhook_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.Float(precision=53), nullable=True),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_webhook_deliveries")),
    )
    op.create_index(
        op.f("ix_team_webhook_deliveries_team_id_webhook_id_created_at"),
        "team_webhook_deliveries",
        ["team_id", "webhook_id", "created_at"],
    )
    op.create_index(
        op.f("ix_team_webhook_deliveries_status_next_attempt_at"),
        "team_webhook_deliveries",
        ["status", "next_attempt_at"],
    )


def downgrade() -> None:
    op.drop_table("team_webhook_deliveries")
    op.drop_table("team_webhooks")
