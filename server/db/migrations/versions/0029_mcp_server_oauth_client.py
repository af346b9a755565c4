"""mcp_servers: an OAuth client entered by hand (its id, and its secret sealed)

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-04 12:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mcp_servers") as batch:
        batch.add_column(sa.Column("oauth_client_id", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("oauth_client_secret", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mcp_servers") as batch:
        batch.drop_column("oauth_client_secret")
        batch.drop_column("oauth_client_id")
