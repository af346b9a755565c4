"""routines: when a routine's creator left the team

A routine runs as its creator: one whose creator left is turned off, and it may not be
turned on or run again (by hand or by a webhook).

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-06 18:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("routines") as batch:
        batch.add_column(sa.Column("creator_left_at", sa.Float(precision=53), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("routines") as batch:
        batch.drop_column("creator_left_at")
