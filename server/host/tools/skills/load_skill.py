"""The ``load_skill`` tool: the instructions of one of the agent's skills (the body of its
``SKILL.md``), read when a task calls for it; its system prompt lists only the names and
descriptions."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.skills.common import SkillName, skills_of


class LoadSkillArgs(ToolArgs):
    name: SkillName = Field(description="The skill's name, as your instructions list it.")


async def load_skill(context: ToolContext, args: LoadSkillArgs) -> dict[str, Any]:
    skills, agent_id = skills_of(context)
    body, files, cut = await skills.load(context.team_id, agent_id, args.name)
    result: dict[str, Any] = {"name": args.name, "instructions": body, "files": files}
    if cut:
        result["truncated"] = "the instructions were cut; read_skill_file reads SKILL.md whole"
    return result


TOOL = Tool(
    name="load_skill",
    description=(
        "Read the instructions of one of your skills (listed by name in your instructions) "
        "before a task it is for, and follow them. Returns the instructions and the paths "
        "of the skill's other files, which read_skill_file reads."
    ),
    args=LoadSkillArgs,
    gated=False,
    run=load_skill,
)
