"""agent memories: indexes in the orders a turn's block and the Memories list read them

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03 15:20:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_PROMPT = "ix_agent_memories_team_id_agent_id_site_pinned_active_at_uses"
_LIST = "ix_agent_memories_team_id_agent_id_pinned_created_at"


def upgrade() -> None:
    with op.batch_alter_table("agent_memories") as batch:
        batch.create_index(
            _PROMPT, ["team_id", "agent_id", "site", "pinned", "active_at", "uses"], unique=False
        )
        batch.create_index(_LIST, ["team_id", "agent_id", "pinned", "created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("agent_memories") as batch:
        batch.drop_index(_LIST)
        batch.drop_index(_PROMPT)
