"""What the skills tools share: the name argument, and the calling agent's skill store."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from server.host.services.skill_format import MAX_NAME_CHARS
from server.host.services.skills import SkillService
from server.host.tools.context import ToolContext
from server.host.tools.results import ToolFailure

SkillName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_CHARS)
]


def skills_of(context: ToolContext) -> tuple[SkillService, str]:
    """The skill store and the calling agent's id; refused outside an agent's turn."""
    agent_id = context.caller.agent_id
    if agent_id is None:
        raise ToolFailure("agentsOnly", "only an agent has skills")
    if context.skills is None:
        raise ToolFailure("skillsUnavailable", "skills are not available here")
    return context.skills, agent_id
