"""The ``propose_skill`` tool: the agent writes a skill (after a person taught it a task, or
from what it learned) as a draft the team's people review, edit and save or discard. A
draft is no agent's skill until a person saves it."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.services.skill_format import MAX_DESCRIPTION_CHARS, MAX_FILE_BYTES
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.skills.common import SkillName, skills_of


class ProposeSkillArgs(ToolArgs):
    name: SkillName = Field(
        description="A short name: lowercase letters, digits and hyphens (file-an-expense)."
    )
    description: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_DESCRIPTION_CHARS),
    ] = Field(description="What the skill does and when to use it, in a sentence or two.")
    body: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_FILE_BYTES // 4)
    ] = Field(
        description=(
            "The instructions in Markdown: what the task is for, the steps in general terms "
            "(what changes each time, what stays), and how to check it worked."
        )
    )


async def propose_skill(context: ToolContext, args: ProposeSkillArgs) -> dict[str, Any]:
    skills, agent_id = skills_of(context)
    skill = await skills.propose(
        context.team_id, agent_id, context.caller.thread_id, args.name, args.description, args.body
    )
    return {
        "proposed": True,
        "name": skill.name,
        "state": skill.state,
        "note": "a person reviews the draft; it is not one of your skills until they save it",
    }


TOOL = Tool(
    name="propose_skill",
    description=(
        "Write a skill for a task you were taught or learned: a draft that the team's people "
        "review, edit and save or discard. Never put passwords, codes or other secrets in it."
    ),
    args=ProposeSkillArgs,
    gated=False,
    run=propose_skill,
)
