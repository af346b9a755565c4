"""The ``ask_agent`` tool: hand a task to another agent of the team and wait for its answer.

The asked agent works in a new thread of its own, linked to the calling one, with its own
tools, permissions and approvals (asked of the people of the calling thread). Only an
agent its admins chose may be asked (``list_agents``); a chain of asks holds at most
``MAX_CHAIN`` agents, and none twice. Stopping the calling turn stops the asked one.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import DelegationRequest, ToolContext
from server.host.tools.results import ToolFailure

# Agents in one chain of asks: A asks B, B asks C; C may ask no one.
MAX_CHAIN = 3
DEFAULT_SECONDS = 300
MAX_SECONDS = 1800
MAX_TASK_CHARS = 20_000


AgentName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class AskAgentArgs(ToolArgs):
    agent: AgentName = Field(description="The agent's id or name, as list_agents gives them.")
    task: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TASK_CHARS)
    ] = Field(description="The task, with everything the agent needs: it sees nothing else.")
    timeout_seconds: int = Field(
        default=DEFAULT_SECONDS,
        ge=1,
        le=MAX_SECONDS,
        description=f"How long to wait for its answer ({DEFAULT_SECONDS} by default, at most "
        f"{MAX_SECONDS}); then its turn is stopped.",
    )


async def ask_agent(context: ToolContext, args: AskAgentArgs) -> dict[str, Any]:
    delegation = context.delegation
    if delegation is None:
        raise ToolFailure("delegationUnavailable", "only an agent's own turn may ask an agent")
    askable = await delegation.askable()
    wanted = args.agent.casefold()
    found = [a for a in askable if a.id == args.agent] or [
        a for a in askable if a.name.casefold() == wanted
    ]
    if len(found) != 1:
        raise ToolFailure(
            "agentNotAskable",
            f"you may not ask {args.agent!r}: list_agents shows the agents you may ask",
        )
    callee = found[0]
    chain = await delegation.chain()
    if callee.id in chain:
        raise ToolFailure(
            "delegationCycle",
            f"{callee.name} is already in this chain of asks (it asked, or was asked, on the "
            "way here): do the task yourself or answer with what you have",
        )
    if len(chain) >= MAX_CHAIN:
        raise ToolFailure(
            "delegationTooDeep",
            f"a chain of asks holds at most {MAX_CHAIN} agents and this one is full: do the "
            "task yourself",
        )
    report = await delegation.ask(
        DelegationRequest(callee.id, args.task, float(args.timeout_seconds), context.turn.call_id)
    )
    result: dict[str, Any] = {
        "agent": callee.name,
        "threadId": report.thread_id,
        "status": report.status,
        "answer": report.answer,
        "files": report.files,
    }
    if report.status == "timeout":
        result["error"] = {
            "code": "delegationTimedOut",
            "message": f"{callee.name} did not answer within {args.timeout_seconds} seconds; "
            "its turn was stopped (its answer so far is given)",
        }
    elif report.status != "done":
        result["error"] = {
            "code": "agentTurnEnded",
            "message": f"{callee.name}'s turn ended {report.status}: {report.reason or ''}",
        }
    return result


TOOL = Tool(
    name="ask_agent",
    description=(
        "Hand a task to another agent of your team (one list_agents shows) and wait for its "
        "answer: it works in a thread of its own with its own tools, and returns its final "
        "words and the team workspace files they name. Give it everything it needs in "
        "`task`."
    ),
    args=AskAgentArgs,
    gated=False,
    run=ask_agent,
)
