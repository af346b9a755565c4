"""browser proxies of a team, and which proxy a named profile uses

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 01:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "browser_proxies",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("scheme", sa.String(length=8), nullable=True),
        sa.Column("host", sa.String(length=253), nullable=True),
        sa.Column("port", sa.Integer(), nullable=True),
        sa.Column("username", sa.String(length=255), nullable=True),
        sa.Column("password", sa.LargeBinary(), nullable=True),
        sa.Column("member_id", sa.String(length=32), nullable=True),
        sa.Column("label", sa.String(length=60), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_browser_proxies")),
        sa.UniqueConstraint(
            "team_id", "member_id", name=op.f("uq_browser_proxies_team_id_member_id")
        ),
    )
    op.create_index(op.f("ix_browser_proxies_team_id"), "browser_proxies", ["team_id"])
    op.create_table(
        "browser_profile_proxies",
        sa.Column("profile_id", sa.String(length=40), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("proxy_id", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(
            ["profile_id"],
            ["browser_profiles.id"],
            name=op.f("fk_browser_profile_proxies_profile_id_browser_profiles"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["proxy_id"],
            ["browser_proxies.id"],
            name=op.f("fk_browser_profile_proxies_proxy_id_browser_proxies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("profile_id", name=op.f("pk_browser_profile_proxies")),
    )
    op.create_index(
        op.f("ix_browser_profile_proxies_team_id_proxy_id"),
        "browser_profile_proxies",
        ["team_id", "proxy_id"],
    )


def downgrade() -> None:
    op.drop_table("browser_profile_proxies")
    op.drop_table("browser_proxies")
