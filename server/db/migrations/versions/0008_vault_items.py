"""a team's vault items, their secret fields sealed by the secret box

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 01:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "vault_items",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("sites", sa.JSON(), nullable=False),
        sa.Column("username", sa.String(length=254), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("cardholder", sa.String(length=100), nullable=True),
        sa.Column("expiry", sa.String(length=7), nullable=True),
        sa.Column("billing_address", sa.String(length=500), nullable=True),
        sa.Column("card_last4", sa.String(length=4), nullable=True),
        sa.Column("card_brand", sa.String(length=20), nullable=True),
        sa.Column("email", sa.String(length=254), nullable=True),
        sa.Column("phone", sa.String(length=40), nullable=True),
        sa.Column("postal_address", sa.String(length=500), nullable=True),
        sa.Column("password", sa.LargeBinary(), nullable=True),
        sa.Column("totp_secret", sa.LargeBinary(), nullable=True),
        sa.Column("card_number", sa.LargeBinary(), nullable=True),
        sa.Column("security_code", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_vault_items")),
    )
    op.create_index(
        op.f("ix_vault_items_team_id_name"), "vault_items", ["team_id", "name"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_vault_items_team_id_name"), table_name="vault_items")
    op.drop_table("vault_items")
