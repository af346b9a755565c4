"""The ``ask_user`` tool: a question for the members who see the thread.

It goes through the attention registry, so it is answered once, by someone who sees
the thread, and it times out (``host.ask_user_seconds``, five minutes by default).
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import BeforeValidator, Field, StrictBool, StringConstraints, model_validator

from server.common.wire import line_for_people, text_for_people
from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import PersonQuestion, ToolContext
from server.host.tools.results import ToolFailure

MAX_QUESTION_CHARS = 2000
MAX_OPTIONS = 20

# People read these: hidden characters (controls, direction overrides) are removed first,
# and what is left must still say something.
Option = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    BeforeValidator(line_for_people),
]
Question = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUESTION_CHARS),
    BeforeValidator(text_for_people),
]


class AskUserArgs(ToolArgs):
    question: Question = Field(description="The question, as the person will read it.")
    options: list[Option] | None = Field(
        default=None,
        min_length=2,
        max_length=MAX_OPTIONS,
        description="Choices to pick from; without them the person answers in words.",
    )
    # true or false only: a word such as "yes" is refused, never read as true.
    multiple: StrictBool = Field(
        default=False, description="Whether several options may be chosen (needs options)."
    )

    @model_validator(mode="after")
    def _options_make_sense(self) -> Self:
        if self.multiple and self.options is None:
            raise ValueError("multiple needs options to choose among")
        if self.options is not None and len(set(self.options)) != len(self.options):
            raise ValueError("each option must be different")
        return self


async def ask_user(context: ToolContext, args: AskUserArgs) -> dict[str, Any]:
    if context.sub_agent:
        raise ToolFailure(
            "notInSubAgent", "a sub-agent cannot ask people; report back to the agent instead"
        )
    if context.ask_person is None or context.turn.call_id is None:
        raise ToolFailure("nobodyToAsk", "there is nobody to ask here")
    answer, why = await context.ask_person(
        PersonQuestion(context.turn.call_id, args.question, args.options, args.multiple)
    )
    if answer is None:
        return {"answer": None, "reason": "timeout" if why == "expired" else why}
    return {"answer": answer}


TOOL = Tool(
    name="ask_user",
    description=(
        "Ask the people who see this conversation a question and wait for the answer: in "
        "words, or one of `options` (several with `multiple`). Use it when only a person "
        "can decide or knows the answer. Without an answer in five minutes it returns "
        '{"answer": null, "reason": "timeout"}: go on without one or stop.'
    ),
    args=AskUserArgs,
    gated=False,
    run=ask_user,
)
