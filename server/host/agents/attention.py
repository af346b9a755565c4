"""The attention registry: what agents are waiting for a person to answer.

Each request has a fresh id and is bound to one tool call and a hash of its
repaired arguments, so an answer approves exactly the call that was shown and
nothing else. It is answered once, by a member who can see its thread, and it
expires: an unanswered consent is a denial. Requests live in memory: a host
that restarts has no turn waiting for them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from server.common.clock import Clock
from server.common.errors import Conflict, NotFound
from server.common.protocol.events import (
    AttentionRequested,
    AttentionResolved,
    HostEvent,
    SecretRequestDetails,
    VaultItemRequestDetails,
)
from server.host.tools.base import PersonReply

AttentionKind = Literal["consent", "secret", "vaultItem"]
# Sends an event to the team's peers whose account passes the filter.
Announce = Callable[[str, HostEvent, Callable[[str], bool]], None]

CONSENT_SECONDS = 300.0


def arguments_hash(arguments: dict[str, Any]) -> str:
    """A stable hash of a call's (repaired) arguments: what a consent approves."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _future() -> asyncio.Future[bool]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class AttentionRequest:
    id: str
    kind: AttentionKind
    team_id: str
    thread_id: str
    agent_id: str
    call_id: str
    tool: str
    arguments_hash: str
    summary: str
    created_at: float
    expires_at: float
    # Who may answer: the accounts that can see the thread.
    visible_to: Callable[[str], bool]
    answer: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    # Its turn ended (stopped) before anyone answered.
    cancelled: bool = False
    # Public facts a person needs to answer a request for a secret or a vault item.
    secret: SecretRequestDetails | None = None
    vault_item: VaultItemRequestDetails | None = None
    # What the person sent with their answer (a secret for a page, a new item's id).
    payload: Any = field(default=None, repr=False)

    def event(self) -> AttentionRequested:
        return AttentionRequested(
            id=self.id,
            kind=self.kind,
            thread_id=self.thread_id,
            agent_id=self.agent_id,
            call_id=self.call_id,
            tool=self.tool,
            summary=self.summary,
            expires_at=self.expires_at,
            secret=self.secret,
            vault_item=self.vault_item,
        )


class AttentionRegistry:
    """Pending requests to people, by id; each answered at most once."""

    def __init__(self, clock: Clock, announce: Announce, *, seconds: float = CONSENT_SECONDS):
        self._clock = clock
        self._announce = announce
        self._seconds = seconds
        self._pending: dict[str, AttentionRequest] = {}

    async def ask_consent(
        self,
        *,
        team_id: str,
        thread_id: str,
        agent_id: str,
        call_id: str,
        tool: str,
        arguments: dict[str, Any],
        summary: str,
        visible_to: Callable[[str], bool],
    ) -> bool:
        """Ask the members who see the thread; True once one approves, False on a denial
        or when the request expires."""
        now = self._clock.now()
        request = AttentionRequest(
            id=secrets.token_hex(16),
            kind="consent",
            team_id=team_id,
            thread_id=thread_id,
            agent_id=agent_id,
            call_id=call_id,
            tool=tool,
            arguments_hash=arguments_hash(arguments),
            summary=summary,
            created_at=now,
            expires_at=now + self._seconds,
            visible_to=visible_to,
        )
        self._pending[request.id] = request
        self._announce(team_id, request.event(), visible_to)
        try:
            return await asyncio.wait_for(asyncio.shield(request.answer), self._seconds)
        except TimeoutError:
            return False
        finally:
            self._forget(request, _outcome(request))

    async def ask_person(
        self,
        *,
        team_id: str,
        thread_id: str,
        agent_id: str,
        tool: str,
        summary: str,
        visible_to: Callable[[str], bool],
        secret: SecretRequestDetails | None = None,
        vault_item: VaultItemRequestDetails | None = None,
        seconds: float | None = None,
    ) -> PersonReply:
        """Ask the members who see the thread for a secret (``secret``) or a new vault item
        (``vault_item``); answered through ``deliver``, declined through ``answer``."""
        now = self._clock.now()
        wait = self._seconds if seconds is None else seconds
        request = AttentionRequest(
            id=secrets.token_hex(16),
            kind="secret" if secret is not None else "vaultItem",
            team_id=team_id,
            thread_id=thread_id,
            agent_id=agent_id,
            call_id="",
            tool=tool,
            arguments_hash="",
            summary=summary,
            created_at=now,
            expires_at=now + wait,
            visible_to=visible_to,
            secret=secret,
            vault_item=vault_item,
        )
        self._pending[request.id] = request
        self._announce(team_id, request.event(), visible_to)
        try:
            delivered = await asyncio.wait_for(asyncio.shield(request.answer), wait)
        except TimeoutError:
            return PersonReply("timeout")
        finally:
            self._forget(request, _outcome(request))
        if request.cancelled:
            return PersonReply("cancelled")
        if not delivered:
            return PersonReply("declined")
        payload, request.payload = request.payload, None
        return PersonReply("answered", payload)

    def pending(
        self, team_id: str, account_id: str, request_id: str, kind: AttentionKind
    ) -> AttentionRequest:
        """The waiting request ``request_id`` of ``kind`` that this member may answer."""
        request = self._pending.get(request_id)
        if request is None or request.team_id != team_id or not request.visible_to(account_id):
            raise NotFound("no such request; it may have expired", code="attentionNotFound")
        if request.answer.done():
            raise Conflict("this request was answered already", code="attentionAnswered")
        if request.kind != kind:
            raise Conflict(
                f"this request asks for {_ASKS_FOR[request.kind]}", code="secretRequestKind"
            )
        return request

    def deliver(self, request: AttentionRequest, payload: Any) -> None:
        """Answer a request from ``pending`` with what the person sent."""
        if request.answer.done():
            raise Conflict("this request was answered already", code="attentionAnswered")
        request.payload = payload
        request.answer.set_result(True)

    def list_requests(self, team_id: str, account_id: str) -> list[AttentionRequest]:
        """The pending requests this member may answer, oldest first."""
        return [
            r
            for r in self._pending.values()
            if r.team_id == team_id and r.visible_to(account_id) and not r.answer.done()
        ]

    def answer(
        self,
        team_id: str,
        account_id: str,
        request_id: str,
        *,
        approve: bool,
        arguments_hash: str | None = None,
    ) -> AttentionRequest:
        """Answer once. A request of another team, or one this member cannot see, is as
        unknown as a missing one; a second answer is refused."""
        request = self._pending.get(request_id)
        if request is None or request.team_id != team_id or not request.visible_to(account_id):
            raise NotFound("no such request; it may have expired", code="attentionNotFound")
        if request.answer.done():
            raise Conflict("this request was answered already", code="attentionAnswered")
        if approve and request.kind != "consent":
            # A secret or an item comes with its own answer, never a bare approval.
            raise Conflict(
                f"this request asks for {_ASKS_FOR[request.kind]}; it can only be declined here",
                code="secretRequestKind",
            )
        if arguments_hash is not None and arguments_hash != request.arguments_hash:
            raise Conflict(
                "the call changed since it was shown; look at it again", code="attentionChanged"
            )
        request.answer.set_result(approve)
        return request

    def cancel_thread(self, team_id: str, thread_id: str) -> None:
        """The thread's turn ended (stopped): its questions need no answer any more."""
        for request in list(self._pending.values()):
            mine = (request.team_id, request.thread_id) == (team_id, thread_id)
            if mine and not request.answer.done():
                request.cancelled = True
                request.answer.set_result(False)

    def _forget(self, request: AttentionRequest, outcome: str) -> None:
        if self._pending.pop(request.id, None) is not None:
            self._announce(
                request.team_id,
                AttentionResolved(id=request.id, thread_id=request.thread_id, outcome=outcome),
                request.visible_to,
            )


_ASKS_FOR: dict[str, str] = {
    "consent": "an approval (attention-v1/answer)",
    "secret": "a secret (browser-secret-handoff-v1/submit)",
    "vaultItem": "a new vault item (browser-secret-vault-v1/add_item)",
}


def _outcome(request: AttentionRequest) -> str:
    if request.cancelled:
        return "cancelled"
    return "answered" if request.answer.done() else "expired"
