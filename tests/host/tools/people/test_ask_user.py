"""ask_user's arguments: what people are shown is plain text, and a flag is a boolean."""

from __future__ import annotations

from typing import Any, cast

from server.host.browser.engine import BrowserEngine
from server.host.tools.catalog import call_tool
from server.host.tools.context import PersonQuestion, ToolContext, TurnState

HIDDEN = (
    "\x00\x07\x1b\r\x7f\x85"  # controls, C0 and C1
    "\u202e\u202a\u202b\u202c\u202d"  # embeddings and overrides
    "\u2066\u2067\u2068\u2069"  # isolates
    "\u200e\u200f\u061c"  # direction marks
    "\u2028\u2029"  # line and paragraph separators
)


async def ask(args: dict[str, Any]) -> tuple[dict[str, Any], list[PersonQuestion]]:
    asked: list[PersonQuestion] = []

    async def ask_person(question: PersonQuestion) -> tuple[str | list[str] | None, str]:
        asked.append(question)
        return "M", "answered"

    context = ToolContext(
        engine=cast(BrowserEngine, None),
        team_id="team-a",
        caller=cast(Any, None),
        turn=TurnState(call_id="toolu_q"),
        ask_person=ask_person,
    )
    return await call_tool(context, "ask_user", args), asked


async def test_controls_and_direction_overrides_never_reach_people() -> None:
    result, [question] = await ask(
        {
            "question": f"Which {HIDDEN}size?\nThe shop has two.",
            "options": [f"S{HIDDEN}", f"\u202egpj.exe{HIDDEN} M"],
        }
    )
    assert result == {"answer": "M"}
    assert question.question == "Which size?\nThe shop has two."
    assert question.options == ["S", "gpj.exe M"]


async def test_an_option_of_nothing_but_hidden_characters_is_refused() -> None:
    result, asked = await ask({"question": "Size?", "options": ["S", HIDDEN]})
    assert result["error"]["code"] == "invalidArguments"
    assert asked == []


async def test_multiple_is_a_boolean_not_a_word() -> None:
    for word in ("yes", "true", 1):
        result, asked = await ask({"question": "Sizes?", "options": ["S", "M"], "multiple": word})
        assert result["error"]["code"] == "invalidArguments", word
        assert asked == []
    _, [question] = await ask({"question": "Sizes?", "options": ["S", "M"], "multiple": True})
    assert question.multiple is True
