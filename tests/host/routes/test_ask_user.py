"""ask_user over real peers: the question reaches who sees the thread, is answered once
(never by a member without the thread), its options hold, and with nobody answering the
agent hears of a timeout once the host's clock has moved past it."""

from __future__ import annotations

import json
from typing import Any

from tests.host.routes.conftest import Team, refused
from tests.host.routes.test_threads import until
from tests.support.clock import FakeClock
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents


async def script_question(team: Team, fake: FakeAnthropic, question: dict[str, Any]) -> None:
    """The agent asks ``question``, then answers in words."""
    await team.admin.call(
        "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
    )
    await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
    fake.script(
        MessageEvents().tool_use("toolu_q", "ask_user", question).stop("tool_use").reply(),
        MessageEvents().text("Noted.").stop().reply(),
    )


def tool_result(fake: FakeAnthropic) -> Any:
    """What the agent read back from its ask_user call (in the second request)."""
    [*_, last] = fake.requests[-1].messages()
    [block] = last["content"]
    assert block["tool_use_id"] == "toolu_q"
    text = block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
    return json.loads(text)


async def start(team: Team, *, shared: bool) -> str:
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.admin.call(
        "threads-v1/start", {"agentId": agent["id"], "title": "Sizes", "shared": shared}
    )
    await team.admin.call("threads-v1/send", {"threadId": thread["id"], "text": "Order a shirt"})
    return str(thread["id"])


async def test_a_question_with_options_is_answered_once(team: Team) -> None:
    async with FakeAnthropic() as fake:
        question = {"question": "Which size?", "options": ["S", "M", "L"]}
        await script_question(team, fake, question)
        thread_id = await start(team, shared=True)
        asked = await until(team.member, thread_id, "attention-requested")
        assert (asked["kind"], asked["question"], asked["options"]) == (
            "question",
            "Which size?",
            ["S", "M", "L"],
        )
        [listed] = (await team.member.call("attention-v1/list"))["requests"]
        assert (listed["id"], listed["multiple"]) == (asked["id"], False)
        wrong = {"id": asked["id"], "answer": "XL"}
        assert await refused(team.member, "attention-v1/reply", wrong) == "answerInvalid"
        consent = {"id": asked["id"], "approve": True}
        assert await refused(team.member, "attention-v1/answer", consent) == "attentionWrongKind"
        answered = await team.member.call("attention-v1/reply", {"id": asked["id"], "answer": "M"})
        assert answered == {"id": asked["id"], "answer": "M"}
        again = {"id": asked["id"], "answer": "L"}
        assert await refused(team.admin, "attention-v1/reply", again) in (
            "attentionAnswered",
            "attentionNotFound",
        )
        finished = await until(team.member, thread_id, "turn-finished")
        assert finished["status"] == "done"
        assert tool_result(fake) == {"answer": "M"}


async def test_a_member_without_the_thread_cannot_answer(team: Team) -> None:
    async with FakeAnthropic() as fake:
        await script_question(team, fake, {"question": "Gift wrap?"})
        thread_id = await start(team, shared=False)
        asked = await until(team.admin, thread_id, "attention-requested")
        assert asked["options"] is None
        assert (await team.member.call("attention-v1/list"))["requests"] == []
        reply = {"id": asked["id"], "answer": "yes"}
        assert await refused(team.member, "attention-v1/reply", reply) == "attentionNotFound"
        await team.admin.call("attention-v1/reply", {"id": asked["id"], "answer": "Yes, please"})
        await until(team.admin, thread_id, "turn-finished")
        assert tool_result(fake) == {"answer": "Yes, please"}


async def test_nobody_answers_and_the_agent_hears_of_a_timeout(
    team: Team, clock: FakeClock
) -> None:
    async with FakeAnthropic() as fake:
        await script_question(team, fake, {"question": "Colour?", "options": ["red", "blue"]})
        thread_id = await start(team, shared=False)
        asked = await until(team.admin, thread_id, "attention-requested")
        clock.advance(300 + 1)
        resolved = await until(team.admin, thread_id, "attention-resolved")
        assert (resolved["id"], resolved["outcome"]) == (asked["id"], "expired")
        finished = await until(team.admin, thread_id, "turn-finished")
        assert finished["status"] == "done"
        assert tool_result(fake) == {"answer": None, "reason": "timeout"}
