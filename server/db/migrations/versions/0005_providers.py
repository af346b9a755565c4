"""model providers of a team, their keys sealed by the secret box

Revision ID: 0005_providers
Revises: 0006
Create Date: 2026-12-01 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_providers"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "providers",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("base_url", sa.String(length=2048), nullable=True),
        sa.Column("default_model", sa.String(length=200), nullable=True),
        sa.Column("models", sa.JSON(), nullable=False),
        sa.Column("api_key", sa.LargeBinary(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("team_id", "id", name=op.f("pk_providers")),
        sa.UniqueConstraint("team_id", "name", name=op.f("uq_providers_team_id_name")),
    )


def downgrade() -> None:
    op.drop_table("providers")
