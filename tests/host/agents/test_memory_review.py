"""Memory review against the fake Messages API, on a real database of each backend: the
agent's model reads the threads (secrets blanked) and its save_memories call lands in the
memory service within its limits; reviews are debounced and run one at a time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import aiohttp
import pytest

from server.common.redaction import redact
from server.common.roles import Role
from server.db.engine import Database
from server.db.tables import agent_memories
from server.host.agents import memory_review
from server.host.agents.budgets import BudgetService, BudgetSpec
from server.host.agents.memory_review import (
    MAX_TRANSCRIPT_CHARS,
    MEMBER_SCOPE_NOTE,
    SAVE_TOOL,
    TEAM_SCOPE_NOTE,
    MemoryReview,
    review_prompt,
)
from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.errors import ProviderError
from server.host.agents.providers.retry import RetryPolicy
from server.host.agents.providers.stream import HttpOptions, ModelProvider
from server.host.agents.providers.transcript import (
    AnyMessage,
    AssistantMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from server.host.agents.usage import RequestFor, UsageService
from server.host.agents.usage_meter import UsageMeters
from server.host.agents.usage_prices import Tokens
from server.host.metrics import HostMetrics
from server.host.services.browsing_steps import ReviewStep
from server.host.services.memories import MAX_MEMORIES_PER_AGENT, MemoryService
from server.host.services.skills import SkillService
from server.host.services.workspace import Member
from server.host.signals import Signals
from server.host.storage.agents import Agent
from server.host.storage.memories import AgentMemory, AgentMemoryRepository
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents, anthropic_error
from tests.support.hub_server import hub_settings, running_hub
from tests.support.peers import peer_member, wait_linked

TEAM = "team-review"
OWNER = Member(TEAM, "acct-owner", Role.OWNER)
CARD_NUMBER = "4111 1111 1111 1111"
PASSWORD = "tr0ub4dor-and-3"


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()


def agent(agent_id: str = "agent-1", model: str | None = "claude-reviewer") -> Agent:
    return Agent(agent_id, TEAM, "Scout", "", "anthropic", model, {}, None, False, None, 0.0, None)


THREAD: list[AnyMessage] = [
    UserMessage(text=f"Pay the invoice on billing.example.com, card {CARD_NUMBER}"),
    AssistantMessage(
        text="Opening billing.",
        tool_calls=(
            ToolCall(id="c1", name="navigate", arguments={"url": "https://billing.example.com"}),
        ),
    ),
    ToolResult(call_id="c1", content=f"Signed in; the form said password: {PASSWORD}"),
    AssistantMessage(text="The Pay button is under Invoices > Open."),
]


class Harness:
    def __init__(self, db: Database, fake: FakeAnthropic, session: aiohttp.ClientSession) -> None:
        self.db = db
        self.memories = MemoryService(db, FakeClock())
        self.fake = fake
        http = HttpOptions(retry=RetryPolicy(max_attempts=1))
        self.provider = AnthropicProvider(
            session, api_key=API_KEY, base_url=fake.base_url, http=http
        )
        self.threads: dict[str, list[AnyMessage]] = {"t1": THREAD, "t2": THREAD[:1]}
        self.reads: list[str] = []
        # Threads private to a member: thread id -> account id.
        self.private: dict[str, str] = {}
        self.skills = SkillService(db, FakeClock(), lambda _team, _event: None, self.any_agent)
        self.usage = UsageService(db, FakeClock(), HostMetrics())
        self.budgets = BudgetService(db, FakeClock(), self.usage, Signals(), lambda _team: [])
        self.review = MemoryReview(
            self.memories,
            self.resolve,
            self.transcript,
            delay=0.0,
            steps=self,
            thread_member=self.member_of,
            propose_skill=self.skills.propose,
            meters=UsageMeters(self.usage, self.budgets),
        )
        self.steps: list[tuple[str, str]] = []
        # Steps taken in a member's private thread's tab: step id -> account id.
        self.step_members: dict[str, str] = {}
        self.removed: list[str] = []

    async def any_agent(self, team_id: str, agent_id: str) -> object:
        return agent_id

    async def resolve(self, team_id: str, provider_id: str) -> tuple[ModelProvider, str]:
        assert (team_id, provider_id) == (TEAM, "anthropic")
        return self.provider, "claude-default"

    async def transcript(self, team_id: str, thread_id: str) -> Sequence[AnyMessage]:
        self.reads.append(thread_id)
        return self.threads[thread_id]

    async def member_of(self, team_id: str, thread_id: str) -> str | None:
        return self.private.get(thread_id)

    async def steps_for_review(self, team_id: str, agent_id: str) -> list[ReviewStep]:
        return [ReviewStep(i, line, self.step_members.get(i)) for i, line in self.steps]

    async def remove_read_steps(self, team_id: str, agent_id: str, ids: Sequence[str]) -> None:
        self.removed.extend(ids)
        self.steps = [s for s in self.steps if s[0] not in ids]


@pytest.fixture
async def harness(db: Database) -> AsyncIterator[Harness]:
    async with FakeAnthropic() as fake, aiohttp.ClientSession() as session:
        built = Harness(db, fake, session)
        yield built
        await built.review.close()
        await built.usage.close()


def saves(*memories: dict[str, str]) -> MessageEvents:
    return MessageEvents().tool_use("toolu_1", SAVE_TOOL, {"memories": list(memories)})


async def test_a_review_keeps_site_memories_from_the_thread(harness: Harness) -> None:
    harness.fake.script(
        saves(
            {"text": "Pay is under Invoices > Open", "site": "https://www.Billing.example.com/x"},
            {"text": "The team pays invoices on the 1st"},
        )
        .stop("tool_use")
        .reply()
    )
    outcome = await harness.review.review(agent(), ["t1"])
    assert (outcome.added, outcome.updated) == (2, 0)
    kept = {m.text: m.site for m in await harness.memories.list_memories(TEAM, "agent-1")}
    assert kept == {
        "Pay is under Invoices > Open": "billing.example.com",
        "The team pays invoices on the 1st": None,
    }
    [request] = harness.fake.requests
    assert request.body["model"] == "claude-reviewer"
    assert [tool["name"] for tool in request.body["tools"]] == [SAVE_TOOL]
    assert "Invoices > Open" in str(request.messages())


async def test_secrets_in_the_thread_never_reach_the_provider(harness: Harness) -> None:
    harness.fake.script(saves().stop("tool_use").reply())
    await harness.review.review(agent(), ["t1"])
    [request] = harness.fake.requests
    sent = str(request.body)
    assert PASSWORD not in sent
    assert CARD_NUMBER not in sent
    assert CARD_NUMBER.replace(" ", "") not in sent
    assert "[card number]" in sent
    assert "[redacted]" in sent


async def test_a_kept_memory_and_a_sign_in_link_are_blanked_before_sending(
    harness: Harness,
) -> None:
    # A memory kept before blanking applied to it (older data): blanked on the way out.
    async with harness.db.write() as conn:
        await AgentMemoryRepository().add_memory(
            conn, AgentMemory("m-old", TEAM, "agent-1", None, "api key: sk-live-0042abc", 0.0)
        )
    link = "https://app.example.com/auth/magic/hWzqKcPmRtLfXvBnJgSdYaEuOiTrZwQe"
    harness.threads["t3"] = [UserMessage(text=f"Sign in with {link} please")]
    harness.fake.script(saves().stop("tool_use").reply())
    await harness.review.review(agent(), ["t3"])
    [request] = harness.fake.requests
    sent = str(request.body)
    assert "sk-live-0042abc" not in sent
    assert "hWzqKcPmRtLfXvBnJgSdYaEuOiTrZwQe" not in sent
    assert "https://app.example.com/auth/magic/:token" in sent


async def test_a_review_rewrites_a_memory_it_names(harness: Harness) -> None:
    old = await harness.memories.add_memory(TEAM, "agent-1", "Pay is on the home page", None)
    harness.fake.script(
        saves({"text": "Pay moved to Invoices", "site": "billing.example.com", "replaces": old.id})
        .stop("tool_use")
        .reply()
    )
    outcome = await harness.review.review(agent(), ["t1"])
    assert (outcome.added, outcome.updated) == (0, 1)
    [memory] = await harness.memories.list_memories(TEAM, "agent-1")
    assert (memory.id, memory.text, memory.site) == (
        old.id,
        "Pay moved to Invoices",
        "billing.example.com",
    )
    assert old.id in str(harness.fake.requests[0].messages())


async def test_a_memory_the_model_saves_with_a_secret_is_blanked(harness: Harness) -> None:
    harness.fake.script(
        saves({"text": f"the pin is 4821, card {CARD_NUMBER}"}).stop("tool_use").reply()
    )
    await harness.review.review(agent(), ["t1"])
    [memory] = await harness.memories.list_memories(TEAM, "agent-1")
    assert "4821" not in memory.text
    assert "1111" not in memory.text


async def test_recorded_steps_are_read_once_and_deleted(harness: Harness) -> None:
    harness.steps = [
        ("s1", "opened shop.example.com/orders/:id (Order)"),
        ("s2", 'pressed button "Refund"'),
    ]
    harness.fake.script(saves().stop("tool_use").reply())
    await harness.review.review(agent(), [])
    [request] = harness.fake.requests
    assert "1. opened shop.example.com/orders/:id" in str(request.messages())
    assert harness.removed == ["s1", "s2"]
    assert harness.steps == []


async def test_learning_from_browsing_may_propose_a_draft_skill(harness: Harness) -> None:
    harness.steps = [
        ("s1", "opened shop.example.com/orders/:id (Order)"),
        ("s2", 'pressed button "Refund"'),
        ("s3", 'pressed button "Confirm refund"'),
    ]
    proposal = {
        "name": "refund-an-order",
        "description": "Refund a shop order. Use when a customer asks for a refund.",
        "body": f"1. Open the order.\n2. Press Refund, card {CARD_NUMBER}.",
    }
    harness.fake.script(
        saves().tool_use("toolu_2", "propose_skill", proposal).stop("tool_use").reply()
    )
    await harness.review.review(agent(), [])
    [request] = harness.fake.requests
    assert [t["name"] for t in request.body["tools"]] == [SAVE_TOOL, "propose_skill"]
    [(draft, _)] = await harness.skills.list_skills(TEAM)
    assert (draft.name, draft.state, draft.source_agent_id) == (
        "refund-an-order",
        "draft",
        "agent-1",
    )
    body = (await harness.skills.get_skill(TEAM, "refund-an-order")).document.body
    assert body.startswith("1. Open the order.")
    assert CARD_NUMBER not in body
    # A review with no browsing steps proposes nothing: it is not offered the tool.
    harness.fake.script(saves().stop("tool_use").reply())
    await harness.review.review(agent(), ["t1"])
    assert [t["name"] for t in harness.fake.requests[1].body["tools"]] == [SAVE_TOOL]


async def test_a_failed_review_is_logged_without_content_and_not_retried(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.fake.script(anthropic_error(400, "invalid_request_error", "bad model"))
    harness.steps = [("s1", "opened shop.example.com/")]
    with caplog.at_level(logging.WARNING, logger="server.host.agents.memory_review"):
        harness.review.turns_ended(agent(), "t1")
        await harness.review.wait_idle(TEAM, "agent-1")
    assert len(harness.fake.requests) == 1
    [record] = [r for r in caplog.records if r.name == "server.host.agents.memory_review"]
    logged = record.getMessage() + str(record.__dict__)
    assert "Invoices" not in logged
    assert "billing" not in logged
    assert "bad model" not in logged
    assert harness.removed == ["s1"]
    assert await harness.memories.list_memories(TEAM, "agent-1") == []


async def test_turns_ending_together_make_one_review(harness: Harness) -> None:
    harness.fake.script(saves({"text": "one"}).stop("tool_use").reply())
    harness.review.turns_ended(agent(), "t1")
    harness.review.turns_ended(agent(), "t2")
    harness.review.turns_ended(agent(), "t1")
    await harness.review.wait_idle(TEAM, "agent-1")
    assert len(harness.fake.requests) == 1
    assert harness.reads == ["t1", "t2"]


async def test_a_turn_ending_during_a_review_waits_for_it(harness: Harness) -> None:
    gate = asyncio.Event()
    started = asyncio.Event()
    original = harness.transcript

    async def slow(team_id: str, thread_id: str) -> Sequence[AnyMessage]:
        started.set()
        await gate.wait()
        return await original(team_id, thread_id)

    harness.review._read_transcript = slow
    harness.fake.script(saves().stop("tool_use").reply(), saves().stop("tool_use").reply())
    harness.review.turns_ended(agent(), "t1")
    await started.wait()
    harness.review.turns_ended(agent(), "t2")
    assert len(harness.fake.requests) == 0
    gate.set()
    await harness.review.wait_idle(TEAM, "agent-1")
    assert harness.reads == ["t1", "t2"]
    assert len(harness.fake.requests) == 2


async def test_the_memory_limit_stops_a_review(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("server.host.services.memories.MAX_MEMORIES_PER_AGENT", 1)
    harness.fake.script(saves({"text": "first"}, {"text": "second"}).stop("tool_use").reply())
    outcome = await harness.review.review(agent(), ["t1"])
    assert outcome.added == 1
    assert [m.text for m in await harness.memories.list_memories(TEAM, "agent-1")] == ["first"]


def test_a_long_threads_newest_part_alone_is_redacted_and_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread far past what the review reads costs only its newest part's redaction,
    and a secret there is still blanked."""
    redacted: list[int] = []

    def measured(text: str) -> str:
        redacted.append(len(text))
        return redact(text)

    monkeypatch.setattr(memory_review, "redact", measured)
    older = [UserMessage(text=f"step {n}: " + "x" * 1_000) for n in range(2_000)]
    newest = UserMessage(text=f"the card is {CARD_NUMBER}, the last step")
    prompt = review_prompt([], [("t1", [*older, newest])], [])
    assert max(redacted) <= MAX_TRANSCRIPT_CHARS + memory_review.REDACTION_MARGIN
    assert "[card number], the last step" in prompt
    assert CARD_NUMBER not in prompt
    assert "step 1999:" in prompt
    assert "step 0:" not in prompt


def test_redaction_keeps_ordinary_numbers() -> None:
    assert redact("order 1234567890123 shipped") == "order 1234567890123 shipped"
    assert redact("card 4242-4242-4242-4242 ok") == "card [card number] ok"
    assert redact('{"password": "s3cret!"}') == '{"password": [redacted]}'
    assert redact("the one-time code is 448812") == "the one-time code is [redacted]"


async def test_a_turn_that_ends_is_reviewed_with_the_agents_browsing_steps(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    settings = hub_settings(tmp_path, database, **{"host.memory_review_seconds": 0.0})
    async with (
        FakeAnthropic(api_key=API_KEY) as fake,
        running_hub(settings, database, clock=FakeClock()) as server,
    ):
        owner = await server.sign_up_owner()
        team_id = await server.first_team_id(owner)
        host_id = await wait_linked(server)
        member = await peer_member(server, "owner@example.com", tmp_path)
        connection = await member.connect(host_id)
        # The key after the address: a provider moved to another origin forgets its key.
        await connection.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
        )
        await connection.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        await connection.call("browsing-memory-v1/set", {"enabled": True})
        agent_id = str((await connection.call("agents-v1/create", {"name": "Scout"}))["id"])
        services = server.builtin.services
        await services.browsing_steps.record(team_id, agent_id, 'pressed button "Refunds"')
        # A shared thread: one review, of the team's scope, reads it and the steps.
        thread = await connection.call(
            "threads-v1/start", {"agentId": agent_id, "title": "W", "shared": True}
        )
        fake.script(
            MessageEvents().text("Refunds are under Orders.").stop().reply(),
            saves({"text": "Refunds are under Orders", "site": "shop.example.com"})
            .stop("tool_use")
            .reply(),
        )
        await connection.call(
            "threads-v1/send",
            {"threadId": thread["id"], "text": f"Where are refunds? My password: {PASSWORD}"},
        )
        await services.threads.wait_idle(thread["id"])
        await services.memory_review.wait_idle(team_id, agent_id)
        [memory] = await services.memories.list_memories(team_id, agent_id)
        assert (memory.text, memory.site) == ("Refunds are under Orders", "shop.example.com")
        _turn, review = fake.requests
        # With browsing steps to read, the review may also propose a draft skill.
        assert [tool["name"] for tool in review.body["tools"]] == [SAVE_TOOL, "propose_skill"]
        assert '1. pressed button "Refunds"' in str(review.messages())
        assert PASSWORD not in str(review.body)
        assert await services.browsing_steps.steps_for_review(team_id, agent_id) == []
        # The review's request is counted with the turn's: the agent's, of nobody.
        usage = await connection.call("usage-v1/summary", {"by": ["agent", "member"]})
        assert sorted((r["key"]["member"] != "", r["requests"]) for r in usage["rows"]) == [
            (False, 1),
            (True, 1),
        ]
        await connection.close()
        await member.hub.close()


async def test_a_private_thread_makes_memories_for_its_member_alone(harness: Harness) -> None:
    team_one = await harness.memories.add_memory(TEAM, "agent-1", "Invoices are monthly", None)
    theirs = await harness.memories.add_memory(
        TEAM, "agent-1", "Ada's cards", None, member_id="acct-ada"
    )
    other = await harness.memories.add_memory(
        TEAM, "agent-1", "Bo's seat", None, member_id="acct-bo"
    )
    harness.private["t1"] = "acct-ada"
    harness.steps = [("s1", 'pressed button "Refunds"')]
    harness.fake.script(
        # The team's scope first (the steps), then Ada's (her private thread).
        saves({"text": "Refunds sit under Orders"}).stop("tool_use").reply(),
        saves(
            {"text": "Ada pays with the blue card", "replaces": theirs.id},
            {"text": "Invoices are monthly, on the 1st", "replaces": team_one.id},
        )
        .stop("tool_use")
        .reply(),
    )
    outcome = await harness.review.review(agent(), ["t1"])
    assert (outcome.added, outcome.updated) == (2, 1)
    team_request, ada_request = harness.fake.requests
    assert team_request.messages()[0]["content"][0]["text"].startswith(TEAM_SCOPE_NOTE)
    assert "Refunds" in str(team_request.messages())
    assert "Invoices > Open" not in str(team_request.messages())
    ada_prompt = ada_request.messages()[0]["content"][0]["text"]
    assert ada_prompt.startswith(MEMBER_SCOPE_NOTE)
    assert "Invoices > Open" in ada_prompt
    assert 'pressed button "Refunds"' not in ada_prompt
    assert "Bo's seat" not in ada_prompt
    assert '"scope": "member"' in ada_prompt
    kept = {m.text: m for m in await harness.memories.list_memories(TEAM, "agent-1")}
    assert kept["Refunds sit under Orders"].member_id is None
    assert kept["Ada pays with the blue card"].id == theirs.id
    # A team memory is never rewritten from a private thread: Ada gets her own version.
    assert kept["Invoices are monthly"].id == team_one.id
    assert kept["Invoices are monthly, on the 1st"].member_id == "acct-ada"
    assert kept["Invoices are monthly, on the 1st"].source_threads == ("t1",)
    assert kept["Bo's seat"].id == other.id


async def test_steps_in_a_private_threads_tab_make_memories_for_its_member_alone(
    harness: Harness,
) -> None:
    harness.steps = [("s1", 'pressed button "Refunds"'), ("s2", 'pressed link "Ada\'s orders"')]
    harness.step_members["s2"] = "acct-ada"
    harness.fake.script(
        # The team's scope first (its step), then Ada's (her private thread's step).
        saves({"text": "Refunds sit under Orders"}).stop("tool_use").reply(),
        saves({"text": "Ada keeps her orders under Mine"}).stop("tool_use").reply(),
    )
    outcome = await harness.review.review(agent(), [])
    assert (outcome.added, outcome.updated) == (2, 0)
    team_request, ada_request = harness.fake.requests
    team_prompt = team_request.messages()[0]["content"][0]["text"]
    assert team_prompt.startswith(TEAM_SCOPE_NOTE)
    assert '1. pressed button "Refunds"' in team_prompt
    assert "Ada's orders" not in team_prompt
    ada_prompt = ada_request.messages()[0]["content"][0]["text"]
    assert ada_prompt.startswith(MEMBER_SCOPE_NOTE)
    assert '1. pressed link "Ada\'s orders"' in ada_prompt
    assert 'pressed button "Refunds"' not in ada_prompt
    # A draft skill is listed to the team: a member's private steps never propose one.
    assert [t["name"] for t in team_request.body["tools"]] == [SAVE_TOOL, "propose_skill"]
    assert [t["name"] for t in ada_request.body["tools"]] == [SAVE_TOOL]
    assert sorted(harness.removed) == ["s1", "s2"]
    # What later turns read: Ada's private threads carry it; shared ones and Bo's do not.
    shown = {
        who: (await harness.memories.prompt_block(TEAM, "agent-1", who, 2000)).text
        for who in (None, "acct-bo", "acct-ada")
    }
    assert "Ada keeps her orders" not in shown[None] + shown["acct-bo"]
    assert "Refunds sit under Orders" in shown[None]
    assert "Ada keeps her orders under Mine" in shown["acct-ada"]


async def test_a_members_spent_budget_keeps_her_private_steps_alone(harness: Harness) -> None:
    await harness.budgets.create_budget(
        OWNER, BudgetSpec("Ada's", "member", "acct-ada", "month", None, None, "tokens", "100")
    )
    spent = RequestFor(TEAM, "agent-1", None, None, "acct-ada", "", "anthropic", "m")
    await harness.usage.record(spent, Tokens(input=100), 0.1, ok=True)
    harness.steps = [("s1", 'pressed button "Refunds"'), ("s2", 'pressed link "Mine"')]
    harness.step_members["s2"] = "acct-ada"
    harness.fake.script(saves().stop("tool_use").reply())
    await harness.review.review(agent(), [])
    [request] = harness.fake.requests
    assert "Mine" not in str(request.messages())
    assert (harness.steps, harness.removed) == ([("s2", 'pressed link "Mine"')], ["s1"])


async def test_a_scope_a_failure_never_reached_keeps_its_steps(harness: Harness) -> None:
    harness.steps = [("s1", 'pressed button "Refunds"'), ("s2", 'pressed link "Mine"')]
    harness.step_members["s2"] = "acct-ada"
    harness.fake.script(anthropic_error(400, "invalid_request_error", "bad model"))
    with pytest.raises(ProviderError):
        await harness.review.review(agent(), [])
    # The team's scope was asked for and failed; Ada's was never reached: hers wait.
    [request] = harness.fake.requests
    assert "Mine" not in str(request.messages())
    assert harness.removed == ["s1"]
    assert harness.steps == [("s2", 'pressed link "Mine"')]


async def test_at_the_limit_a_review_still_rewrites(harness: Harness) -> None:
    rows = [
        {"id": f"m{n:04d}", "team_id": TEAM, "agent_id": "agent-1", "text": f"note {n}"}
        | {"created_at": float(n), "active_at": float(n)}
        for n in range(MAX_MEMORIES_PER_AGENT - 1)
    ]
    async with harness.db.write() as conn:
        await conn.execute(agent_memories.insert(), rows)
    harness.fake.script(
        saves(
            {"text": "a new one"},
            {"text": "one too many"},
            {"text": "note 990, corrected", "replaces": "m0990"},
        )
        .stop("tool_use")
        .reply()
    )
    outcome = await harness.review.review(agent(), ["t1"])
    assert (outcome.added, outcome.updated) == (1, 1)
    kept = {m.id: m.text for m in await harness.memories.list_memories(TEAM, "agent-1")}
    assert kept["m0990"] == "note 990, corrected"
    assert "a new one" in kept.values()
    assert "one too many" not in kept.values()


async def test_deleting_the_agent_ends_its_running_review(harness: Harness) -> None:
    gate = asyncio.Event()
    started = asyncio.Event()

    async def stuck(team_id: str, thread_id: str) -> Sequence[AnyMessage]:
        started.set()
        await gate.wait()
        return THREAD

    harness.review._read_transcript = stuck
    harness.review.turns_ended(agent(), "t1")
    await started.wait()
    harness.review.turns_ended(agent(), "t2")
    harness.review.forget_agent(TEAM, "agent-1")
    await harness.review.wait_idle(TEAM, "agent-1")
    gate.set()
    await harness.review.close()
    assert harness.fake.requests == []
    assert await harness.memories.list_memories(TEAM, "agent-1") == []


async def test_a_reviews_requests_count_as_the_agents_and_the_private_threads_member(
    harness: Harness,
) -> None:
    harness.private["t1"] = "acct-ada"
    harness.steps = [("s1", 'pressed button "Refunds"')]
    harness.fake.script(
        MessageEvents(input_tokens=400)
        .tool_use("toolu_1", SAVE_TOOL, {"memories": []})
        .stop("tool_use", output_tokens=20)
        .reply(),
        MessageEvents(input_tokens=300)
        .tool_use("toolu_1", SAVE_TOOL, {"memories": []})
        .stop("tool_use", output_tokens=10)
        .reply(),
    )
    await harness.review.review(agent(), ["t1"])
    report = await harness.usage.summary(OWNER, None, None, ["agent", "member", "model"])
    assert [(t.key, t.requests, t.input_tokens, t.output_tokens) for t in report.totals] == [
        ({"agent": "agent-1", "member": "", "model": "claude-reviewer"}, 1, 400, 20),
        ({"agent": "agent-1", "member": "acct-ada", "model": "claude-reviewer"}, 1, 300, 10),
    ]


async def test_a_spent_budget_skips_the_review_and_keeps_its_steps(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    # Ada's budget is spent: the review of her private thread is skipped, the team's goes.
    await harness.budgets.create_budget(
        OWNER, BudgetSpec("Ada's", "member", "acct-ada", "month", None, None, "tokens", "100")
    )
    spent = RequestFor(TEAM, "agent-1", None, None, "acct-ada", "", "anthropic", "m")
    await harness.usage.record(spent, Tokens(input=100), 0.1, ok=True)
    harness.private["t1"] = "acct-ada"
    harness.fake.script(saves({"text": "Team note"}).stop("tool_use").reply())
    with caplog.at_level(logging.INFO, logger="server.host.agents.memory_review"):
        outcome = await harness.review.review(agent(), ["t1", "t2"])
    assert outcome.added == 1
    [request] = harness.fake.requests
    assert request.messages()[0]["content"][0]["text"].startswith(TEAM_SCOPE_NOTE)
    [logged] = [r for r in caplog.records if r.name == "server.host.agents.memory_review"]
    assert "budgetExceeded" in logged.getMessage()
    assert "Ada's" not in logged.getMessage() + str(logged.__dict__)
    # The agent's budget is spent too: nothing is sent, and the steps wait for the next.
    await harness.budgets.create_budget(
        OWNER, BudgetSpec("Scout's", "agent", "agent-1", "month", None, None, "tokens", "100")
    )
    harness.steps = [("s1", 'pressed button "Refunds"')]
    outcome = await harness.review.review(agent(), ["t2"])
    assert (outcome.added, outcome.updated) == (0, 0)
    assert len(harness.fake.requests) == 1
    assert (harness.steps, harness.removed) == ([("s1", 'pressed button "Refunds"')], [])
    assert [m.text for m in await harness.memories.list_memories(TEAM, "agent-1")] == ["Team note"]
