"""who joined with which invitation, and when

Revision ID: 0007
Revises: 0005_providers
Create Date: 2026-12-01 22:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0005_providers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "invitation_uses",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("invitation_id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("used_at", sa.Float(precision=53), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_invitation_uses_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["invitation_id"],
            ["invitations.id"],
            name=op.f("fk_invitation_uses_invitation_id_invitations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_invitation_uses_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invitation_uses")),
    )
    op.create_index(
        op.f("ix_invitation_uses_team_id"), "invitation_uses", ["team_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_invitation_uses_team_id"), table_name="invitation_uses")
    op.drop_table("invitation_uses")
