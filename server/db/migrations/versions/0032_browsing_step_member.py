"""browsing steps: the member whose private thread's tab a step was taken in

A step taken in a private thread's tab is reviewed into that member's memories, never the
team's. Steps recorded before have no member (the team's, as they were): the tab's thread
was never kept, and they are read at the next review or expire within 30 days.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-06 17:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("browsing_steps") as batch:
        batch.add_column(sa.Column("member_id", sa.String(length=32), nullable=True))


def downgrade() -> None:
    # Without the column a member's private steps would read as the team's: forget them.
    op.execute("DELETE FROM browsing_steps WHERE member_id IS NOT NULL")
    with op.batch_alter_table("browsing_steps") as batch:
        batch.drop_column("member_id")
