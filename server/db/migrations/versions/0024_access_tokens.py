"""personal access tokens for the MCP endpoint, and the audit list of their use

Revision ID: 0024
Revises: 0022
Create Date: 2026-12-04 00:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

ID = sa.String(length=32)
TIME = sa.Float(precision=53)


def upgrade() -> None:
    op.create_table(
        "access_tokens",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("host_id", ID, nullable=False),
        sa.Column("account_id", ID, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=32), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("expires_at", TIME, nullable=False),
        sa.Column("last_used_at", TIME, nullable=True),
        sa.Column("revoked_at", TIME, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_access_tokens_token_hash")),
    )
    op.create_index(
        op.f("ix_access_tokens_team_id_account_id"),
        "access_tokens",
        ["team_id", "account_id"],
        unique=False,
    )
    op.create_table(
        "access_token_uses",
        sa.Column("id", ID, nullable=False),
        sa.Column("team_id", ID, nullable=False),
        sa.Column("token_id", ID, nullable=False),
        sa.Column("account_id", ID, nullable=False),
        sa.Column("at", TIME, nullable=False),
        sa.Column("tool", sa.String(length=100), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_token_uses")),
    )
    op.create_index(
        op.f("ix_access_token_uses_team_id_token_id_at"),
        "access_token_uses",
        ["team_id", "token_id", "at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_access_token_uses_team_id_token_id_at"), table_name="access_token_uses")
    op.drop_table("access_token_uses")
    op.drop_index(op.f("ix_access_tokens_team_id_account_id"), table_name="access_tokens")
    op.drop_table("access_tokens")
