"""The attention registry: what agents are waiting for a person to answer.

Two kinds: consent for a gated call, and an agent's question (``ask_user``). Each
request has a fresh id and is bound to one tool call (a consent also to a hash of its
repaired arguments, so an answer approves exactly the call that was shown and nothing
else). It is answered once, by a member who can see its thread, and it expires on the
host's clock: an unanswered consent is a denial, an unanswered question comes back as
no answer.

Each request is also stored (``attention_requests``) with its expiry, who may answer and
how it ended, and ``AttentionWaiting`` is published as it is raised (notifications follow
it). A host that stops keeps waiting the consents its turns are put aside for (``keep``),
and its next start takes each up again where it was (``ask_consent`` with ``kept_id``: the
same request, its expiry and who may answer it, announced again but not notified twice).
Every other request still waiting when a host stops, or starts after a crash, ends
``interrupted`` (its turn too), and an answer to one is refused with
``attentionInterrupted``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from server.common.clock import Clock
from server.common.errors import Conflict, CrewhostError, InvalidArgument, NotFound
from server.common.protocol.events import (
    AttentionRequested,
    AttentionResolved,
    HostEvent,
    SecretRequestDetails,
    VaultItemRequestDetails,
)
from server.db.engine import Database
from server.host.agents.work_signals import AttentionWaiting
from server.host.signals import Signals
from server.host.storage.attention import WAITING, AttentionRepository, StoredRequest
from server.host.storage.threads import ThreadRepository
from server.host.tools.context import PersonReply

log = logging.getLogger(__name__)

AttentionKind = Literal["consent", "question", "secret", "vaultItem"]
# What a member answers to a question: a text, one of its options, or several of them.
Answer = str | list[str]
# Sends an event to the team's peers whose account passes the filter.
Announce = Callable[[str, HostEvent, Callable[[str], bool]], None]

CONSENT_SECONDS = 300.0
QUESTION_SECONDS = 300.0
# What a request still waiting when its host stops (or starts after a crash) is told.
INTERRUPTED = "the host restarted while this waited; its turn ended interrupted"
# What a consent kept across a restart is told when its call no longer reads as it was shown.
ASKED_AGAIN = (
    "after the host restarted, the call no longer read as it was shown; it was asked again"
)
# How often a waiting request looks at the host's clock for its expiry (seconds).
EXPIRY_TICK = 1.0
MAX_ANSWER_CHARS = 4000


def arguments_hash(arguments: dict[str, Any]) -> str:
    """A stable hash of a call's (repaired) arguments: what a consent approves."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


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
    # A consent's approval (bool), or a question's answer (None: none came).
    answer: asyncio.Future[bool | Answer | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    # Its turn ended (stopped) before anyone answered.
    cancelled: bool = False
    question: str | None = None
    options: list[str] | None = None
    multiple: bool = False
    # Public facts a person needs to answer a request for a secret or a vault item.
    secret: SecretRequestDetails | None = None
    vault_item: VaultItemRequestDetails | None = None
    # What the person sent with their answer (a secret for a page, a new item's id).
    payload: Any = field(default=None, repr=False)
    # A consent's one line from the host: what the call will do, on which page.
    description: str | None = None
    # Who may answer when named (a routine's approvers); None: whoever sees the thread.
    addressed_to: tuple[str, ...] | None = None
    routine_id: str | None = None
    answered_by: str | None = None
    # The host stops and its turn is put aside: the request stays waiting for the next start.
    kept: bool = False

    def may_answer(self, account_id: str) -> bool:
        if self.addressed_to is not None:
            return account_id in self.addressed_to
        return self.visible_to(account_id)

    def audience(self) -> Callable[[str], bool]:
        """Who hears of the request: those who may answer it."""
        return self.visible_to if self.addressed_to is None else self.may_answer

    def human_line(self) -> str:
        """What waits, in words for a notification: never arguments, code or secrets."""
        if self.kind == "consent":
            return self.description or f"approve a call of {self.tool}"
        if self.kind == "question":
            return f"answer a question: {self.summary}"
        return self.summary

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
            question=self.question,
            options=self.options,
            multiple=self.multiple,
            secret=self.secret,
            vault_item=self.vault_item,
            description=self.description,
        )


class AttentionRegistry:
    """Pending requests to people, by id; each answered at most once."""

    def __init__(
        self,
        clock: Clock,
        announce: Announce,
        *,
        seconds: float = CONSENT_SECONDS,
        question_seconds: float = QUESTION_SECONDS,
        tick: float = EXPIRY_TICK,
        db: Database | None = None,
        signals: Signals | None = None,
    ):
        self._clock = clock
        self._announce = announce
        # Where requests are kept (None: in memory only, for tests of the registry alone).
        self._db = db
        self._signals = signals or Signals()
        self._repo = AttentionRepository()
        self._threads = ThreadRepository()
        self._seconds = seconds
        self._question_seconds = question_seconds
        self._tick = tick
        self._pending: dict[str, AttentionRequest] = {}
        self._closing = False

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
        description: str | None = None,
        expires_in: float | None = None,
        addressed_to: Sequence[str] | None = None,
        routine_id: str | None = None,
        kept_id: str | None = None,
    ) -> bool:
        """Ask the members who see the thread (or those ``addressed_to``); True once one
        approves, False on a denial or when the request expires (after ``expires_in``
        seconds, the registry's default when None).

        ``kept_id``: the consent a former run of the host kept for this call, waited for
        again (the same request, until the same expiry, for the same people, announced
        again but not notified again; one that expired meanwhile is a denial), unless the
        call no longer reads as it was shown (its page changed across the restart) or the
        request no longer waits: then a new one asks for the call as it reads now."""
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
            expires_at=now + (self._seconds if expires_in is None else expires_in),
            visible_to=visible_to,
            description=description,
            addressed_to=_addressed(addressed_to),
            routine_id=routine_id,
        )
        if kept_id is not None and await self._adopted(request, kept_id):
            self._pending[request.id] = request
            self._announce(request.team_id, request.event(), request.audience())
            return await self._await(request) is True
        return await self._wait(request) is True

    async def ask_question(
        self,
        *,
        team_id: str,
        thread_id: str,
        agent_id: str,
        call_id: str,
        question: str,
        options: list[str] | None,
        multiple: bool,
        visible_to: Callable[[str], bool],
        expires_in: float | None = None,
        addressed_to: Sequence[str] | None = None,
        routine_id: str | None = None,
    ) -> tuple[Answer | None, Literal["answered", "expired", "cancelled"]]:
        """Ask the members who see the thread; the answer once one gives it, or None and
        why none came (the question expired, or its turn was stopped)."""
        now = self._clock.now()
        request = AttentionRequest(
            id=secrets.token_hex(16),
            kind="question",
            team_id=team_id,
            thread_id=thread_id,
            agent_id=agent_id,
            call_id=call_id,
            tool="ask_user",
            arguments_hash=arguments_hash(
                {"question": question, "options": options, "multiple": multiple}
            ),
            summary=question[:200],
            created_at=now,
            expires_at=now + (self._question_seconds if expires_in is None else expires_in),
            visible_to=visible_to,
            question=question,
            options=options,
            multiple=multiple,
            addressed_to=_addressed(addressed_to),
            routine_id=routine_id,
        )
        answer = await self._wait(request)
        outcome = _outcome(request)
        if outcome != "answered" or isinstance(answer, bool):
            return None, "cancelled" if request.cancelled else "expired"
        return answer, "answered"

    async def _adopted(self, request: AttentionRequest, kept_id: str) -> bool:
        """Whether ``request`` (a consent asked for again after a restart) takes the place
        of the consent ``kept_id`` a former run kept for its call: the same id, expiry and
        people, when the call still reads as it was shown. A kept request that does not fit
        ends ``interrupted``."""
        if self._db is None:
            return False
        async with self._db.read() as conn:
            stored = await self._repo.get_request(conn, request.team_id, kept_id)
        if stored is None or stored.status != WAITING:
            return False
        if (
            stored.kind != "consent"
            or (stored.thread_id, stored.tool) != (request.thread_id, request.tool)
            or stored.description != request.human_line()
        ):
            await self._end_stored(stored, ASKED_AGAIN)
            return False
        request.id = kept_id
        request.created_at, request.expires_at = stored.created_at, stored.expires_at
        request.addressed_to, request.routine_id = stored.addressed_to, stored.routine_id
        return True

    async def end_kept(
        self, team_id: str, request_id: str, outcome: Literal["cancelled", "interrupted"]
    ) -> None:
        """A consent kept across a restart that its turn no longer waits for (it ended, or
        went past its call) ends as ``outcome``, unless it ended already."""
        if self._db is None:
            return
        async with self._db.read() as conn:
            stored = await self._repo.get_request(conn, team_id, request_id)
        if stored is not None and stored.status == WAITING and request_id not in self._pending:
            reason = INTERRUPTED if outcome == "interrupted" else None
            await self._end_stored(stored, reason, outcome)

    async def _end_stored(
        self, stored: StoredRequest, reason: str | None, outcome: str = "interrupted"
    ) -> None:
        if self._db is None:
            return
        async with self._db.write() as conn:
            await self._repo.update_ended(
                conn,
                stored.team_id,
                stored.id,
                status=outcome,
                reason=reason,
                answered_by=None,
                resolved_at=self._clock.now(),
            )

    async def _wait(self, request: AttentionRequest) -> bool | Answer | None:
        """Announce ``request`` and wait for its answer until it expires on the host's
        clock, looking at the clock at least every tick; None when it expires."""
        waiting = await self._waiting(request)
        await self._store(request, waiting.whole_team)
        self._pending[request.id] = request
        self._announce(request.team_id, request.event(), request.audience())
        self._signals.publish(waiting)
        return await self._await(request)

    async def _await(self, request: AttentionRequest) -> bool | Answer | None:
        """Wait for the answer of ``request`` (pending and announced) until it expires; how
        it ended is kept, unless the host keeps it waiting for its next start."""
        try:
            while not request.answer.done():
                left = request.expires_at - self._clock.now()
                if left <= 0:
                    break
                # Not asyncio.wait_for: on 3.11 it drops a cancel (a person stopping the
                # turn) that comes as the answer does, and the stopped turn would act on it.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(left, self._tick)):
                        await asyncio.shield(request.answer)
            return request.answer.result() if request.answer.done() else None
        finally:
            if request.kept and not request.answer.done():
                # Its turn is put aside: the record stays waiting, and nobody is told it
                # ended, for the host's next start takes it up.
                self._pending.pop(request.id, None)
            else:
                outcome: str = _outcome(request)
                if self._closing and outcome != "answered":
                    outcome = "interrupted"
                self._forget(request, outcome)
                await self._ended(request, outcome)

    async def _store(self, request: AttentionRequest, whole_team: bool) -> None:
        if self._db is None:
            return
        async with self._db.write() as conn:
            await self._repo.add_request(
                conn,
                StoredRequest(
                    id=request.id,
                    team_id=request.team_id,
                    thread_id=request.thread_id,
                    agent_id=request.agent_id,
                    routine_id=request.routine_id,
                    kind=request.kind,
                    tool=request.tool,
                    description=request.human_line(),
                    addressed_to=request.addressed_to,
                    whole_team=whole_team,
                    created_at=request.created_at,
                    expires_at=request.expires_at,
                    status=WAITING,
                ),
            )

    async def _waiting(self, request: AttentionRequest) -> AttentionWaiting:
        """The signal of ``request``: addressed to the accounts named, or to the thread's
        starter (and the whole team when the thread is shared)."""
        addressed, whole_team = request.addressed_to, False
        if addressed is None:
            addressed = ()
            if self._db is not None:
                async with self._db.read() as conn:
                    thread = await self._threads.get_thread(
                        conn, request.team_id, request.thread_id
                    )
                if thread is not None:
                    addressed, whole_team = (thread.created_by,), thread.shared
        return AttentionWaiting(
            team_id=request.team_id,
            agent_id=request.agent_id,
            thread_id=request.thread_id,
            request_id=request.id,
            kind=request.kind,
            description=request.human_line(),
            addressed_to=addressed,
            expires_at=request.expires_at,
            routine_id=request.routine_id,
            whole_team=whole_team,
        )

    async def _ended(self, request: AttentionRequest, outcome: str) -> None:
        """Keep how ``request`` ended; a request of a host that is stopping is interrupted."""
        if self._db is None:
            return
        reason = INTERRUPTED if outcome == "interrupted" else None
        try:
            async with self._db.write() as conn:
                await self._repo.update_ended(
                    conn,
                    request.team_id,
                    request.id,
                    status=outcome,
                    reason=reason,
                    answered_by=request.answered_by,
                    resolved_at=self._clock.now(),
                )
        except Exception:
            # The turn goes on with its answer; the record stays waiting until the host
            # starts again and ends it interrupted.
            log.exception("could not keep how a request ended", extra={"id": request.id})

    async def recover(self, keep: Collection[str] = ()) -> int:
        """At start-up: every request a former run of the host left waiting, but the
        consents in ``keep`` (their turns are taken up again), has no turn waiting for it
        any more; each ends ``interrupted``. How many did."""
        if self._db is None:
            return 0
        async with self._db.write() as conn:
            return await self._repo.update_all_waiting(
                conn,
                status="interrupted",
                reason=INTERRUPTED,
                resolved_at=self._clock.now(),
                keep=keep,
            )

    def closing(self) -> None:
        """The host is stopping: requests that end from now on end ``interrupted``, but
        those it keeps."""
        self._closing = True

    def keep(self, team_id: str, thread_id: str, call_id: str) -> AttentionRequest | None:
        """The host is stopping: the consent the thread's turn waits for on ``call_id``
        stays waiting for its next start; None when no stored consent waits for that call
        (or it was answered as the host stopped)."""
        for request in self._pending.values():
            if (
                (request.team_id, request.thread_id, request.call_id)
                == (team_id, thread_id, call_id)
                and request.kind == "consent"
                and not request.answer.done()
                and self._db is not None
            ):
                request.kept = True
                return request
        return None

    async def gone(self, team_id: str, account_id: str, request_id: str) -> CrewhostError:
        """Why a request that no longer waits cannot be answered: for a member who could
        have answered it, how it ended (answered, or interrupted by a restart); for anyone
        else, and for a request never stored, as unknown as a missing one."""
        missing = NotFound("no such request; it may have expired", code="attentionNotFound")
        if self._db is None:
            return missing
        async with self._db.read() as conn:
            stored = await self._repo.get_request(conn, team_id, request_id)
            if stored is None:
                return missing
            thread = await self._threads.get_thread(conn, team_id, stored.thread_id)
        if stored.addressed_to is not None:
            allowed = account_id in stored.addressed_to
        else:
            allowed = thread is not None and thread.visible_to(account_id)
        if allowed and stored.status == "interrupted":
            return Conflict(stored.reason or INTERRUPTED, code="attentionInterrupted")
        if allowed and stored.status == "answered":
            return Conflict("this request was answered already", code="attentionAnswered")
        return missing

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
        addressed_to: Sequence[str] | None = None,
        routine_id: str | None = None,
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
            addressed_to=_addressed(addressed_to),
            routine_id=routine_id,
        )
        delivered = await self._wait(request)
        if request.cancelled:
            return PersonReply("cancelled")
        if delivered is None:
            return PersonReply("timeout")
        if delivered is not True:
            return PersonReply("declined")
        payload, request.payload = request.payload, None
        return PersonReply("answered", payload)

    def pending(
        self, team_id: str, account_id: str, request_id: str, kind: AttentionKind
    ) -> AttentionRequest:
        """The waiting request ``request_id`` of ``kind`` that this member may answer."""
        request = self._pending.get(request_id)
        if request is None or request.team_id != team_id or not request.may_answer(account_id):
            raise NotFound("no such request; it may have expired", code="attentionNotFound")
        if request.answer.done():
            raise Conflict("this request was answered already", code="attentionAnswered")
        if request.kind != kind:
            raise Conflict(
                f"this request asks for {_ASKS_FOR[request.kind]}", code="secretRequestKind"
            )
        return request

    def deliver(self, request: AttentionRequest, account_id: str, payload: Any) -> None:
        """Answer a request from ``pending`` with what ``account_id`` sent; one that ended
        while the answer was made ready (it expired, its turn stopped), or that this member
        may no longer answer (the thread was taken back), takes nothing."""
        if request.answer.done():
            raise Conflict("this request was answered already", code="attentionAnswered")
        if (
            self._pending.get(request.id) is not request
            or self._clock.now() >= request.expires_at
            or not request.may_answer(account_id)
        ):
            raise NotFound("no such request; it may have expired", code="attentionNotFound")
        request.answered_by = account_id
        request.payload = payload
        request.answer.set_result(True)

    def list_requests(self, team_id: str, account_id: str) -> list[AttentionRequest]:
        """The pending requests this member may answer, oldest first."""
        return [
            r
            for r in self._pending.values()
            if r.team_id == team_id and r.may_answer(account_id) and not r.answer.done()
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
        request = self._answerable(team_id, account_id, request_id)
        if request.kind == "question":
            raise Conflict(
                "this request is a question: answer it with a reply", code="attentionWrongKind"
            )
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
        request.answered_by = account_id
        request.answer.set_result(approve)
        return request

    def reply(self, team_id: str, account_id: str, request_id: str, answer: Answer) -> Answer:
        """Answer a question once: a text, or for a question with options one of them (a
        list of them, in the options' order, when it allows several). Answers the answer
        as the agent gets it."""
        request = self._answerable(team_id, account_id, request_id)
        if request.kind != "question":
            raise Conflict(
                "this request asks for consent: approve or deny it", code="attentionWrongKind"
            )
        checked = _checked_answer(request, answer)
        request.answered_by = account_id
        request.answer.set_result(checked)
        return checked

    def _answerable(self, team_id: str, account_id: str, request_id: str) -> AttentionRequest:
        request = self._pending.get(request_id)
        if request is None or request.team_id != team_id or not request.may_answer(account_id):
            raise NotFound("no such request; it may have expired", code="attentionNotFound")
        if request.answer.done():
            raise Conflict("this request was answered already", code="attentionAnswered")
        return request

    def cancel_thread(self, team_id: str, thread_id: str) -> None:
        """The thread's turn ended (stopped): its questions need no answer any more."""
        for request in list(self._pending.values()):
            mine = (request.team_id, request.thread_id) == (team_id, thread_id)
            if mine and not request.answer.done():
                request.cancelled = True
                request.answer.set_result(False if request.kind == "consent" else None)

    def _forget(self, request: AttentionRequest, outcome: str) -> None:
        if self._pending.pop(request.id, None) is not None:
            self._announce(
                request.team_id,
                AttentionResolved(id=request.id, thread_id=request.thread_id, outcome=outcome),
                request.audience(),
            )


_ASKS_FOR: dict[str, str] = {
    "consent": "an approval (attention-v1/answer)",
    "question": "an answer (attention-v1/reply)",
    "secret": "a secret (browser-secret-handoff-v1/submit)",
    "vaultItem": "a new vault item (browser-secret-vault-v1/add_item)",
}


def _addressed(accounts: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if accounts is None else tuple(dict.fromkeys(accounts))


def _outcome(request: AttentionRequest) -> Literal["answered", "expired", "cancelled"]:
    if request.cancelled:
        return "cancelled"
    return "answered" if request.answer.done() else "expired"


def _checked_answer(request: AttentionRequest, answer: Answer) -> Answer:
    """``answer`` if it fits ``request``'s question; ``answerInvalid`` otherwise."""

    def refuse(message: str) -> InvalidArgument:
        return InvalidArgument(message, code="answerInvalid", field="answer")

    if request.options is None:
        if not isinstance(answer, str) or not answer.strip():
            raise refuse("answer the question in words")
        if len(answer) > MAX_ANSWER_CHARS:
            raise refuse(f"an answer may be at most {MAX_ANSWER_CHARS} characters long")
        return answer
    if request.multiple:
        if not isinstance(answer, list) or not answer:
            raise refuse("choose one or more of the options")
        if len(set(answer)) != len(answer) or not set(answer) <= set(request.options):
            raise refuse("choose each option at most once, and only among those offered")
        return [option for option in request.options if option in answer]
    if not isinstance(answer, str) or answer not in request.options:
        raise refuse("choose one of the options")
    return answer
