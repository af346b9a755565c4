"""people notifications: the list per member, email preferences, the team's mail server

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03 20:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

ID = sa.String(32)
TIME = sa.Float(precision=53)


def upgrade() -> None:
    op.create_table(
        "notifications",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("account_id", ID, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("body", sa.String(1000), nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("thread_id", ID, nullable=True),
        sa.Column("request_id", ID, nullable=True),
        sa.Column("routine_id", ID, nullable=True),
        sa.Column("run_id", ID, nullable=True),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("read_at", TIME, nullable=True),
        sa.Column("digest_pending", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
    )
    op.create_index(
        op.f("ix_notifications_team_id_account_id_created_at"),
        "notifications",
        ["team_id", "account_id", "created_at"],
    )
    op.create_index(
        op.f("ix_notifications_team_id_account_id_digest_pending"),
        "notifications",
        ["team_id", "account_id", "digest_pending"],
    )
    op.create_table(
        "notification_preferences",
        sa.Column("team_id", ID, nullable=False),
        sa.Column("account_id", ID, nullable=False),
        sa.Column("email", sa.String(254), nullable=True),
        sa.Column("approval", sa.String(16), nullable=False),
        sa.Column("question", sa.String(16), nullable=False),
        sa.Column("run_finished", sa.String(16), nullable=False),
        sa.Column("run_failed", sa.String(16), nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.Column("digest_at", TIME, nullable=True),
        sa.PrimaryKeyConstraint("team_id", "account_id", name=op.f("pk_notification_preferences")),
    )
    op.create_table(
        "smtp_settings",
        sa.Column("team_id", ID, nullable=False),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("port", sa.Integer, nullable=False),
        sa.Column("tls_mode", sa.String(16), nullable=False),
        sa.Column("username", sa.String(254), nullable=True),
        sa.Column("password", sa.LargeBinary, nullable=True),
        sa.Column("from_address", sa.String(254), nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_smtp_settings")),
    )


def downgrade() -> None:
    op.drop_table("smtp_settings")
    op.drop_table("notification_preferences")
    op.drop_index(
        op.f("ix_notifications_team_id_account_id_digest_pending"), table_name="notifications"
    )
    op.drop_index(
        op.f("ix_notifications_team_id_account_id_created_at"), table_name="notifications"
    )
    op.drop_table("notifications")
