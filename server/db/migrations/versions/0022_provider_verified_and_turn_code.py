"""providers: when each last answered with its key and address; turns: an error's stable code

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-03 20:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("providers") as batch:
        batch.add_column(sa.Column("verified_at", sa.Float(precision=53), nullable=True))
    with op.batch_alter_table("turns") as batch:
        batch.add_column(sa.Column("code", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("code")
    with op.batch_alter_table("providers") as batch:
        batch.drop_column("verified_at")
