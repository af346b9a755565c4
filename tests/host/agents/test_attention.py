"""The attention registry: one answer per request, bound to the call shown, by those who see
its thread; an unanswered consent is a denial, an unanswered question has no answer, both
on the host's clock."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server.common.errors import Conflict, InvalidArgument, NotFound
from server.common.protocol.events import AttentionRequested, AttentionResolved, HostEvent
from server.host.agents.attention import ASKED_AGAIN, AttentionRegistry, arguments_hash
from server.host.agents.work_signals import AttentionWaiting
from server.host.signals import Signals
from server.host.storage.attention import AttentionRepository
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.waiting import eventually

TEAM = "t" * 32
ARGS = {"tabId": "tab-1", "ref": "e5"}


class Told:
    def __init__(self) -> None:
        self.events: list[tuple[str, HostEvent, Any]] = []

    def __call__(self, team_id: str, event: HostEvent, only: Any) -> None:
        self.events.append((team_id, event, only))


def alice_only(account_id: str) -> bool:
    return account_id == "alice"


async def ask(registry: AttentionRegistry, **overrides: Any) -> asyncio.Task[bool]:
    fields: dict[str, Any] = {
        "team_id": TEAM,
        "thread_id": "thread-1",
        "agent_id": "agent-1",
        "call_id": "call-1",
        "tool": "click",
        "arguments": ARGS,
        "summary": "click e5",
        "visible_to": alice_only,
    }
    task = asyncio.ensure_future(registry.ask_consent(**(fields | overrides)))
    await asyncio.sleep(0)  # the request is registered and announced
    return task


async def test_an_approval_lets_the_call_run_once() -> None:
    told = Told()
    registry = AttentionRegistry(FakeClock(), told)
    waiting = await ask(registry)
    [request] = registry.list_requests(TEAM, "alice")
    assert registry.list_requests(TEAM, "bob") == []
    assert isinstance(told.events[0][1], AttentionRequested)
    assert told.events[0][2] is alice_only  # only those who see the thread hear of it
    registry.answer(TEAM, "alice", request.id, approve=True, arguments_hash=arguments_hash(ARGS))
    assert await waiting is True
    with pytest.raises(NotFound):
        registry.answer(TEAM, "alice", request.id, approve=False)
    assert isinstance(told.events[-1][1], AttentionResolved)


async def test_a_denial_a_second_answer_and_a_stranger_are_refused() -> None:
    registry = AttentionRegistry(FakeClock(), Told())
    waiting = await ask(registry)
    [request] = registry.list_requests(TEAM, "alice")
    with pytest.raises(NotFound) as stranger:
        registry.answer(TEAM, "bob", request.id, approve=True)
    assert stranger.value.code == "attentionNotFound"
    with pytest.raises(NotFound):
        registry.answer("o" * 32, "alice", request.id, approve=True)
    with pytest.raises(Conflict) as changed:
        registry.answer(TEAM, "alice", request.id, approve=True, arguments_hash="0" * 64)
    assert changed.value.code == "attentionChanged"
    registry.answer(TEAM, "alice", request.id, approve=False)
    with pytest.raises(Conflict) as again:
        registry.answer(TEAM, "alice", request.id, approve=True)
    assert again.value.code == "attentionAnswered"
    assert await waiting is False


async def test_an_unanswered_request_expires_as_a_denial() -> None:
    clock = FakeClock()
    registry = AttentionRegistry(clock, Told(), seconds=300, tick=0.01)
    waiting = await ask(registry)
    await asyncio.sleep(0.02)
    assert not waiting.done()
    clock.advance(301)
    assert await waiting is False
    assert registry.list_requests(TEAM, "alice") == []


async def test_stopping_a_thread_denies_its_questions() -> None:
    told = Told()
    registry = AttentionRegistry(FakeClock(), told)
    waiting = await ask(registry)
    other = await ask(registry, thread_id="thread-2", call_id="call-2")
    registry.cancel_thread(TEAM, "thread-1")
    assert await waiting is False
    assert not other.done()
    [left] = registry.list_requests(TEAM, "alice")
    registry.answer(TEAM, "alice", left.id, approve=True)
    assert await other is True
    outcomes = [e.outcome for _, e, _ in told.events if isinstance(e, AttentionResolved)]
    assert outcomes == ["cancelled", "answered"]


def test_the_arguments_hash_ignores_key_order_only() -> None:
    assert arguments_hash({"a": 1, "b": 2}) == arguments_hash({"b": 2, "a": 1})
    assert arguments_hash({"a": 1}) != arguments_hash({"a": 2})


async def question(
    registry: AttentionRegistry, options: list[str] | None = None, *, multiple: bool = False
) -> asyncio.Task[Any]:
    task = asyncio.ensure_future(
        registry.ask_question(
            team_id=TEAM,
            thread_id="thread-1",
            agent_id="agent-1",
            call_id="call-q",
            question="Which size?",
            options=options,
            multiple=multiple,
            visible_to=alice_only,
        )
    )
    await asyncio.sleep(0)
    return task


async def test_a_question_is_answered_once_by_who_sees_its_thread() -> None:
    told = Told()
    registry = AttentionRegistry(FakeClock(), told)
    waiting = await question(registry)
    [request] = registry.list_requests(TEAM, "alice")
    [(_, event, _)] = told.events
    assert isinstance(event, AttentionRequested)
    assert (event.kind, event.question, event.options) == ("question", "Which size?", None)
    with pytest.raises(NotFound):
        registry.reply(TEAM, "bob", request.id, "Large")
    with pytest.raises(Conflict) as wrong:
        registry.answer(TEAM, "alice", request.id, approve=True)
    assert wrong.value.code == "attentionWrongKind"
    with pytest.raises(InvalidArgument) as empty:
        registry.reply(TEAM, "alice", request.id, "  ")
    assert empty.value.code == "answerInvalid"
    registry.reply(TEAM, "alice", request.id, "Large")
    with pytest.raises(Conflict) as again:
        registry.reply(TEAM, "alice", request.id, "Small")
    assert again.value.code == "attentionAnswered"
    assert await waiting == ("Large", "answered")


async def test_a_question_with_options_takes_only_its_options() -> None:
    registry = AttentionRegistry(FakeClock(), Told())
    single = await question(registry, ["S", "M", "L"])
    [request] = registry.list_requests(TEAM, "alice")
    for bad in ("XL", ["S"]):
        with pytest.raises(InvalidArgument):
            registry.reply(TEAM, "alice", request.id, bad)
    registry.reply(TEAM, "alice", request.id, "M")
    assert await single == ("M", "answered")

    several = await question(registry, ["S", "M", "L"], multiple=True)
    [request] = registry.list_requests(TEAM, "alice")
    for bad in ("S", [], ["S", "S"], ["S", "XL"]):
        with pytest.raises(InvalidArgument):
            registry.reply(TEAM, "alice", request.id, bad)
    registry.reply(TEAM, "alice", request.id, ["L", "S"])
    assert await several == (["S", "L"], "answered")


async def test_an_unanswered_question_times_out_on_the_host_clock() -> None:
    clock = FakeClock()
    told = Told()
    registry = AttentionRegistry(clock, told, question_seconds=300, tick=0.01)
    waiting = await question(registry)
    await asyncio.sleep(0.02)
    assert not waiting.done()
    clock.advance(301)
    assert await waiting == (None, "expired")
    outcomes = [e.outcome for _, e, _ in told.events if isinstance(e, AttentionResolved)]
    assert outcomes == ["expired"]


async def test_stopping_the_thread_ends_its_question() -> None:
    registry = AttentionRegistry(FakeClock(), Told())
    waiting = await question(registry)
    registry.cancel_thread(TEAM, "thread-1")
    assert await waiting == (None, "cancelled")


async def test_a_request_addressed_to_approvers_waits_for_them_only_until_its_expiry() -> None:
    """A routine's request: its approvers answer it (whoever else sees the thread does not),
    it waits as long as the routine says, and its signal names them and the card's line."""
    clock, told, signals = FakeClock(), Told(), Signals()
    heard: list[AttentionWaiting] = []
    signals.subscribe(AttentionWaiting, heard.append)
    registry = AttentionRegistry(clock, told, signals=signals, tick=0.01)
    day = 24 * 3600.0
    waiting = await ask(
        registry,
        visible_to=lambda account_id: True,
        addressed_to=["bob", "carol", "bob"],
        expires_in=day,
        routine_id="routine-1",
        description="Click “Pay” on Shop (shop.test)",
    )
    [signal] = heard
    assert (signal.addressed_to, signal.whole_team, signal.routine_id) == (
        ("bob", "carol"),
        False,
        "routine-1",
    )
    assert (signal.description, signal.kind) == ("Click “Pay” on Shop (shop.test)", "consent")
    assert signal.expires_at == pytest.approx(clock.now() + day)
    assert registry.list_requests(TEAM, "alice") == []
    [request] = registry.list_requests(TEAM, "carol")
    assert request.routine_id == "routine-1"
    # Only the approvers hear of it.
    only = told.events[0][2]
    assert [who for who in ("alice", "bob", "carol") if only(who)] == ["bob", "carol"]
    with pytest.raises(NotFound):
        registry.answer(TEAM, "alice", request.id, approve=True)
    clock.advance(300 + 1)  # a chat's request would have expired by now
    await asyncio.sleep(0.03)
    assert not waiting.done()
    registry.answer(TEAM, "bob", request.id, approve=True)
    assert await waiting is True
    assert request.answered_by == "bob"


async def test_a_consent_without_a_description_is_described_without_its_arguments() -> None:
    signals = Signals()
    heard: list[AttentionWaiting] = []
    signals.subscribe(AttentionWaiting, heard.append)
    registry = AttentionRegistry(FakeClock(), Told(), signals=signals)
    waiting = await ask(registry, arguments={"text": "hunter2"}, summary="type …")
    [signal] = heard
    assert signal.description == "approve a call of click"
    [request] = registry.list_requests(TEAM, "alice")
    registry.answer(TEAM, "alice", request.id, approve=False)
    assert await waiting is False


async def test_a_kept_consent_is_waited_for_again_unless_its_call_reads_otherwise(
    database: ScratchDatabase,
) -> None:
    db = database.open()
    clock = FakeClock()
    try:
        before = AttentionRegistry(clock, Told(), db=db)
        waiting = await ask(before, description="Click “Buy” on Shop (shop.test)")
        await eventually(lambda: bool(before.list_requests(TEAM, "alice")))
        [asked] = before.list_requests(TEAM, "alice")
        # The host stops: the request is kept for the next start, and its turn put aside.
        before.closing()
        assert before.keep(TEAM, "thread-1", "call-1") is asked
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

        told = Told()
        signals = Signals()
        raised: list[AttentionWaiting] = []
        signals.subscribe(AttentionWaiting, raised.append)
        after = AttentionRegistry(clock, told, db=db, signals=signals)
        assert await after.recover(keep={asked.id}) == 0
        again = await ask(after, description="Click “Buy” on Shop (shop.test)", kept_id=asked.id)
        await eventually(lambda: bool(after.list_requests(TEAM, "alice")))
        [resumed] = after.list_requests(TEAM, "alice")
        assert (resumed.id, resumed.expires_at) == (asked.id, asked.expires_at)
        assert raised == []  # announced again, not notified again
        after.answer(TEAM, "alice", asked.id, approve=True, arguments_hash=arguments_hash(ARGS))
        assert await again is True

        # Kept again, and taken up where the page now shows another button: asked anew.
        waiting = await ask(after, description="Click “Buy” on Shop (shop.test)")
        await eventually(lambda: len(raised) == 1)
        after.closing()
        kept = after.keep(TEAM, "thread-1", "call-1")
        assert kept is not None
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        last = AttentionRegistry(clock, Told(), db=db, signals=signals)
        asked_anew = await ask(
            last, description="Click “Delete all” on Shop (shop.test)", kept_id=kept.id
        )
        await eventually(lambda: bool(last.list_requests(TEAM, "alice")))
        [fresh] = last.list_requests(TEAM, "alice")
        assert fresh.id != kept.id
        assert fresh.description == "Click “Delete all” on Shop (shop.test)"
        assert len(raised) == 2  # a new request: its people are told of it
        last.answer(TEAM, "alice", fresh.id, approve=False)
        assert await asked_anew is False
        async with db.read() as conn:
            stored = await AttentionRepository().get_request(conn, TEAM, kept.id)
        assert stored is not None
        assert (stored.status, stored.reason) == ("interrupted", ASKED_AGAIN)
    finally:
        await db.close()
