"""hosts enrolments hub keys

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 23:45:19.266976
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hub_keys",
        sa.Column("id", sa.String(length=16), nullable=False),
        sa.Column("private_key", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hub_keys")),
    )
    op.create_table(
        "host_enrolments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("expires_at", sa.Float(precision=53), nullable=False),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["accounts.id"],
            name=op.f("fk_host_enrolments_created_by_accounts"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"],
            ["teams.id"],
            name=op.f("fk_host_enrolments_team_id_teams"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_host_enrolments")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_host_enrolments_code_hash")),
    )
    with op.batch_alter_table("host_enrolments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_host_enrolments_team_id"), ["team_id"], unique=False)

    op.create_table(
        "hosts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("public_key", sa.String(length=64), nullable=False),
        sa.Column("builtin", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("linked_at", sa.Float(precision=53), nullable=True),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_hosts_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hosts")),
        sa.UniqueConstraint("public_key", name=op.f("uq_hosts_public_key")),
    )
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_hosts_team_id"), ["team_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("hosts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hosts_team_id"))

    op.drop_table("hosts")
    with op.batch_alter_table("host_enrolments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_host_enrolments_team_id"))

    op.drop_table("host_enrolments")
    op.drop_table("hub_keys")
