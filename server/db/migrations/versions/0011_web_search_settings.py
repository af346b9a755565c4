"""how a team's agents search the web, its key sealed by the secret box

Revision ID: 0011
Revises: 0009
Create Date: 2026-12-02 01:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_search_settings",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("engine", sa.String(length=16), nullable=False),
        sa.Column("base_url", sa.String(length=2048), nullable=True),
        sa.Column("engine_id", sa.String(length=200), nullable=True),
        sa.Column("api_key", sa.LargeBinary(), nullable=True),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("team_id", name=op.f("pk_web_search_settings")),
    )


def downgrade() -> None:
    op.drop_table("web_search_settings")
