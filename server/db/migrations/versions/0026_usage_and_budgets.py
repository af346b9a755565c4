"""model requests, their daily rollups, team prices, usage settings and budgets

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-04 03:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = sa.Float(precision=53)
TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


def upgrade() -> None:
    op.create_table(
        "model_requests",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("thread_id", ID, nullable=True),
        sa.Column("turn_id", ID, nullable=True),
        sa.Column("account_id", ID, nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("provider_id", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in TOKENS),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("cost_micros", sa.BigInteger(), nullable=True),
        sa.Column("at", TIME, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_model_requests")),
    )
    op.create_index(
        op.f("ix_model_requests_team_id_at"), "model_requests", ["team_id", "at"], unique=False
    )
    op.create_table(
        "usage_rollups",
        sa.Column("team_id", ID, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("account_id", ID, nullable=False),
        sa.Column("provider_id", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("routine_id", ID, nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in TOKENS),
        sa.Column("cost_micros", sa.BigInteger(), nullable=False),
        sa.Column("unpriced_requests", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "team_id",
            "day",
            "agent_id",
            "account_id",
            "provider_id",
            "model",
            "routine_id",
            name=op.f("pk_usage_rollups"),
        ),
    )
    op.create_table(
        "usage_prices",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("provider_id", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("valid_from", TIME, nullable=False),
        sa.Column("input", sa.String(length=32), nullable=False),
        sa.Column("output", sa.String(length=32), nullable=False),
        sa.Column("cache_read", sa.String(length=32), nullable=False),
        sa.Column("cache_write", sa.String(length=32), nullable=False),
        sa.Column("created_by", ID, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_prices")),
        sa.UniqueConstraint(
            "team_id",
            "provider_id",
            "model",
            "valid_from",
            name=op.f("uq_usage_prices_team_id_provider_id_model_valid_from"),
        ),
    )
    op.create_table(
        "usage_settings",
        sa.Column("team_id", ID, nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("rate", sa.String(length=32), nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_usage_settings")),
    )
    op.create_table(
        "budgets",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("target_id", ID, nullable=False),
        sa.Column("period", sa.String(length=16), nullable=False),
        sa.Column("first_day", sa.String(length=10), nullable=True),
        sa.Column("last_day", sa.String(length=10), nullable=True),
        sa.Column("unit", sa.String(length=16), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("warned_period", sa.String(length=10), nullable=True),
        sa.Column("created_by", ID, nullable=False),
        sa.Column("updated_by", ID, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_budgets")),
    )
    op.create_index(op.f("ix_budgets_team_id"), "budgets", ["team_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_budgets_team_id"), table_name="budgets")
    op.drop_table("budgets")
    op.drop_table("usage_settings")
    op.drop_table("usage_prices")
    op.drop_table("usage_rollups")
    op.drop_index(op.f("ix_model_requests_team_id_at"), table_name="model_requests")
    op.drop_table("model_requests")
