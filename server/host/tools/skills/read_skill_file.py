"""The ``read_skill_file`` tool: one text file of one of the agent's skills (a reference, a
template, a snippet to run with ``run_script``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.services.skill_format import MAX_PATH_CHARS
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.skills.common import SkillName, skills_of


class ReadSkillFileArgs(ToolArgs):
    name: SkillName = Field(description="The skill's name.")
    path: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATH_CHARS)] = Field(
        description="The file's path inside the skill, as load_skill listed it."
    )


async def read_skill_file(context: ToolContext, args: ReadSkillFileArgs) -> dict[str, Any]:
    skills, agent_id = skills_of(context)
    text, size, cut = await skills.read_file(context.team_id, agent_id, args.name, args.path)
    result: dict[str, Any] = {"name": args.name, "path": args.path, "size": size, "text": text}
    if cut:
        result["truncated"] = f"only the start of the file's {size} bytes is shown"
    return result


TOOL = Tool(
    name="read_skill_file",
    description=(
        "Read one text file of one of your skills (a reference, a template or a snippet). "
        "A snippet is code to run with run_script, never anywhere else."
    ),
    args=ReadSkillFileArgs,
    gated=False,
    run=read_skill_file,
)
