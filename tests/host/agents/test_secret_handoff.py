"""Answers to an agent's request for a vault item, on both databases: one answer saves one
item, and an answer that comes too late leaves none behind."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.errors import CrewhostError
from server.common.protocol.events import VaultItemRequestDetails
from server.host.agents.attention import AttentionRegistry, AttentionRequest
from server.host.agents.secret_handoff import SecretHandoffService
from server.host.services.vault import VaultService, VaultSummary
from server.host.tools.context import PersonReply
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase

TEAM = "t" * 32
ADA, BO = "a" * 32, "b" * 32


@dataclass
class Asked:
    clock: FakeClock
    vault: VaultService
    handoff: SecretHandoffService
    request: AttentionRequest
    answer: asyncio.Task[object]
    # Who sees the request's thread now (the thread's sharing, as a test changes it).
    seeing: set[str]

    @property
    def request_id(self) -> str:
        return self.request.id


@pytest.fixture
async def asked(database: ScratchDatabase, clock: FakeClock) -> AsyncIterator[Asked]:
    """A ``request_vault_item`` waiting for a contact, which Ada and Bo may answer."""
    db = database.open()
    vault = VaultService(db, clock, SecretBox(KeyRing.generate()))
    seeing = {ADA, BO}
    announced = asyncio.Event()
    attention = AttentionRegistry(clock, lambda *_: announced.set())
    answer = asyncio.create_task(
        attention.ask_person(
            team_id=TEAM,
            thread_id="h" * 32,
            agent_id="g" * 32,
            tool="request_vault_item",
            summary="a contact for the booking",
            visible_to=lambda account: account in seeing,
            vault_item=VaultItemRequestDetails(kind="contact", prefill={}, reason="booking"),
        )
    )
    await announced.wait()  # told to the team as it starts waiting
    [request] = attention.list_requests(TEAM, ADA)
    try:
        yield Asked(clock, vault, SecretHandoffService(attention, vault), request, answer, seeing)
    finally:
        answer.cancel()
        await db.close()


async def names(vault: VaultService) -> list[str]:
    return [item.name for item in (await vault.list_summaries(TEAM)).items]


async def test_two_people_answering_at_once_save_one_item(asked: Asked) -> None:
    answers = await asyncio.gather(
        asked.handoff.add_requested_item(TEAM, ADA, asked.request_id, {"name": "Ada's"}),
        asked.handoff.add_requested_item(TEAM, BO, asked.request_id, {"name": "Bo's"}),
        return_exceptions=True,
    )
    saved = [a for a in answers if isinstance(a, VaultSummary)]
    refused = [a.code for a in answers if isinstance(a, CrewhostError)]
    assert ([s.name for s in saved], refused) == (["Ada's"], ["attentionAnswered"])
    assert await names(asked.vault) == ["Ada's"]
    # The agent gets the one item saved.
    reply = await asked.answer
    assert isinstance(reply, PersonReply)
    assert (reply.outcome, reply.payload) == ("answered", saved[0])
    assert asked.request.answered_by == ADA


async def test_an_item_saved_as_its_request_is_declined_is_not_kept(asked: Asked) -> None:
    async def decline() -> None:
        asked.handoff.decline(TEAM, BO, asked.request_id, "vaultItem")

    answers = await asyncio.gather(
        asked.handoff.add_requested_item(TEAM, ADA, asked.request_id, {"name": "Ada's"}),
        decline(),
        return_exceptions=True,
    )
    assert isinstance(answers[0], CrewhostError)
    assert answers[0].code == "attentionAnswered"
    assert await names(asked.vault) == []


def expire(asked: Asked) -> None:
    asked.clock.advance(8 * 86_400)  # past any request's time


def take_back(asked: Asked) -> None:
    asked.seeing.discard(ADA)  # the thread's starter takes it back from the team


@pytest.mark.parametrize("meanwhile", [expire, take_back])
async def test_an_item_saved_as_its_request_ends_for_its_member_is_not_kept(
    asked: Asked, monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[Asked], None]
) -> None:
    saving, saved = asyncio.Event(), asyncio.Event()
    create = asked.vault.create_item

    async def slow_create(*args: object, **kwargs: object) -> object:
        saving.set()
        await saved.wait()
        return await create(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(asked.vault, "create_item", slow_create)
    adding = asyncio.create_task(
        asked.handoff.add_requested_item(TEAM, ADA, asked.request_id, {"name": "Ada's"})
    )
    await saving.wait()
    meanwhile(asked)
    saved.set()
    with pytest.raises(CrewhostError) as refused:
        await adding
    assert refused.value.code == "attentionNotFound"
    assert await names(asked.vault) == []
