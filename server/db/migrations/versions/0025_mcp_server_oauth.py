"""mcp_servers: an OAuth sign-in's client registration and tokens, sealed

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-04 03:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mcp_servers") as batch:
        batch.add_column(sa.Column("oauth", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mcp_servers") as batch:
        batch.drop_column("oauth")
