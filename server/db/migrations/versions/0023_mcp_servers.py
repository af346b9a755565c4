"""MCP servers of a team (environment values and headers sealed) and the agents that have them

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-04 00:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mcp_servers",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("transport", sa.String(length=8), nullable=False),
        sa.Column("command", sa.String(length=1000), nullable=True),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=True),
        sa.Column("secret_names", sa.JSON(), nullable=False),
        sa.Column("secrets", sa.LargeBinary(), nullable=True),
        sa.Column("call_timeout", sa.Float(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("updated_at", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mcp_servers")),
        sa.UniqueConstraint("team_id", "name", name=op.f("uq_mcp_servers_team_id_name")),
    )
    op.create_table(
        "mcp_server_agents",
        sa.Column("team_id", sa.String(length=32), nullable=False),
        sa.Column("server_id", sa.String(length=32), nullable=False),
        sa.Column("agent_id", sa.String(length=32), nullable=False),
        sa.Column("unasked_tools", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("server_id", "agent_id", name=op.f("pk_mcp_server_agents")),
    )
    op.create_index(
        op.f("ix_mcp_server_agents_team_id_agent_id"),
        "mcp_server_agents",
        ["team_id", "agent_id"],
    )


def downgrade() -> None:
    op.drop_table("mcp_server_agents")
    op.drop_table("mcp_servers")
