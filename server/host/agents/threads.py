"""Threads and turns: a member talks to an agent; each message starts one turn.

A thread belongs to its agent and to the member who started it, and is theirs
alone unless shared with the team; a member who cannot see a thread can neither
read it, send to it, stop it nor answer its agent's questions. One turn runs per
thread at a time: a message sent while one runs waits in the thread's queue
(``message_queue``) and starts the next turn when it ends. What a turn says streams to
the members who see the thread; a member who connects mid-turn reads the thread so far
(with the running turn's text) and then follows the events. Each member's read cursor
gives the unread counts of the chat list.

A host that stops while a turn waits for consent to one of its calls puts the turn aside
(``suspended_turns``, its transcript so far in the thread, its request still waiting), and
its next start takes the turn up where it was: the same request waits for an answer, and
an approval runs the call. Every other turn still running when a host stops, or starts
after a crash, ends ``interrupted``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from server.common.clock import Clock
from server.common.errors import Conflict, CrewhostError, InvalidArgument, NotFound
from server.common.protocol import events
from server.common.tasks import BackgroundTasks
from server.db.engine import Database
from server.host.agents.attention import AttentionRegistry, AttentionRequest
from server.host.agents.delegation import TurnDelegation
from server.host.agents.message_queue import MessageQueue, user_message
from server.host.agents.prompt import system_prompt
from server.host.agents.providers.stream import ModelProvider
from server.host.agents.providers.transcript import (
    AssistantMessage,
    Attachment,
    ImageBlock,
    ToolCall,
    UserMessage,
    message_from_json,
    message_to_json,
)
from server.host.agents.sub_agents import run_sub_agent
from server.host.agents.summaries import summarizer
from server.host.agents.thread_titles import title_from_message
from server.host.agents.turn_loop import (
    DEFAULT_MAX_TOOL_CALLS,
    CallCard,
    Message,
    ToolOutcome,
    TurnProgress,
    TurnSetup,
    TurnTools,
    consent_summary,
    run_turn,
)
from server.host.agents.turn_slots import TurnSlots
from server.host.agents.usage import RequestFor
from server.host.agents.usage_meter import UsageMeters
from server.host.browser.callers import Caller
from server.host.metrics import HostMetrics
from server.host.rtc.revocations import MemberRemoved, RemovalsHeard
from server.host.services.agents import AgentService
from server.host.services.memories import MemoryService
from server.host.services.skills import SkillService
from server.host.services.tasks import Task, TaskService
from server.host.services.workspace import Member, WorkspaceService
from server.host.signals import Signals
from server.host.storage.agents import Agent
from server.host.storage.queued_messages import QueuedMessage
from server.host.storage.read_cursors import ReadCursorRepository
from server.host.storage.suspended_turns import SuspendedTurn, SuspendedTurnRepository
from server.host.storage.threads import StoredMessage, Thread, ThreadRepository, Turn
from server.host.tools.context import (
    PersonQuestion,
    SubAgentReport,
    SubAgentRequest,
    ToolContextFactory,
    Unattended,
)
from server.host.workspace.attachments import ImportedFile
from server.host.workspace.workspaces import WorkspaceRef

log = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 32_000
MAX_TITLE_CHARS = 200
# How far up a chain of asks is read (further than any chain the tools let grow).
MAX_ASKING_CHAIN_READ = 10
MAX_ATTACHMENTS = 10
# Larger images reach the model as a path mention: providers refuse bigger image blocks.
MAX_IMAGE_BLOCK_BYTES = 5 * 1024 * 1024
# Most bytes of a preview a member is sent (as a data: URL).
MAX_PREVIEW_BYTES = 1024 * 1024
TEXT_BATCH_SECONDS = 0.03
# What a turn a former run of the host left running is told (it stopped, or crashed).
INTERRUPTED = "the host stopped while this turn ran"

# (team, agent's provider id) -> the provider to stream from and its default model.
ResolveProvider = Callable[[str, str], Awaitable[tuple[ModelProvider, str]]]
# (team, provider id, error or None): what the provider said last, for its status.
RecordProviderError = Callable[[str, str, str | None], Awaitable[None]]
Announce = Callable[[str, events.HostEvent, Callable[[str], bool]], None]
# (team, agent): the agent's MCP tools for a turn, or None when it has none.
McpToolsFor = Callable[[str, str], Awaitable[TurnTools | None]]


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """A turn of the agent's thread ``thread_id`` ended (in any status)."""

    agent: Agent
    thread_id: str


@dataclass(frozen=True, slots=True)
class ThreadContents:
    thread: Thread
    messages: list[Message]
    turns: list[Turn]
    running_turn_id: str | None
    running_text: str
    # The running turn waits for one of the team's places (``TurnSlots``).
    running_turn_waiting: bool = False
    tasks: list[Task] = field(default_factory=list)
    queued: list[QueuedMessage] = field(default_factory=list)
    # The threads its agent's ``ask_agent`` calls started, oldest first.
    delegations: list[Thread] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class KeptConsent:
    """The consent a turn waits for as the host stops, kept waiting for its next start: the
    request waiting now, or None for one a former run kept that the turn has not reached
    again yet."""

    request_id: str
    call_id: str
    request: AttentionRequest | None = None


@dataclass(eq=False)
class RunningTurn:
    """A turn in progress: its task, its progress and the text streamed so far."""

    turn: Turn
    thread: Thread
    progress: TurnProgress = field(default_factory=TurnProgress)
    text: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None
    # The member who started it ('' for a routine's run): whose use its requests are.
    started_by: str = ""
    # Its work is done and its end is being stored: a stop comes too late to cut it short.
    ending: bool = False
    # Its end is stored: a member who reads the thread reads it from the transcript.
    finished: bool = False
    # It waits for one of the team's places.
    waiting: bool = False
    # Nobody sits in it (a routine's run, an asked agent's): who answers its requests.
    unattended: Unattended | None = None
    # The host stops while it waits for this consent: it is put aside, to be taken up again.
    kept: KeptConsent | None = None
    # It was put aside by a former run of the host: the consent its first call waits for
    # (None once that call asks for it again).
    resumed: SuspendedTurn | None = None

    @property
    def suspended(self) -> bool:
        """Put aside as the host stops (the consent it waited for still unanswered)."""
        if self.kept is None:
            return False
        return self.kept.request is None or not self.kept.request.answer.done()

    def resuming(self) -> bool:
        """Taken up at this start and not yet past the call it was put aside at (its
        transcript not read yet, or that call still without a result)."""
        if self.resumed is None:
            return False
        if not self.progress.pending:
            return True
        unanswered = self.progress.unanswered_calls()
        return bool(unanswered) and unanswered[0].id == self.resumed.call_id

    @property
    def approvers(self) -> tuple[str, ...] | None:
        """Who may answer its requests; None: whoever sees the thread."""
        return (self.unattended.approvers or None) if self.unattended is not None else None

    @property
    def attention_seconds(self) -> float | None:
        """How long each of its requests waits; None: the registry's default."""
        return self.unattended.attention_seconds if self.unattended is not None else None

    @property
    def routine_id(self) -> str | None:
        return self.unattended.routine_id if self.unattended is not None else None

    @property
    def on_callers_place(self) -> bool:
        """It runs on the place of the turn that asked for it (``ask_agent``)."""
        return self.unattended is not None and self.unattended.on_callers_place


class ThreadService:
    """Threads, their transcripts and their turns."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        agents: AgentService,
        attention: AttentionRegistry,
        announce: Announce,
        resolve_provider: ResolveProvider,
        tool_contexts: ToolContextFactory,
        record_provider_error: RecordProviderError,
        tasks: TaskService,
        workspace: WorkspaceService,
        *,
        attachment_max_bytes: int,
        signals: Signals | None = None,
        metrics: HostMetrics,
        memories: MemoryService | None = None,
        memory_prompt_tokens: int = 0,
        mcp_tools: McpToolsFor | None = None,
        usage: UsageMeters | None = None,
        skills: SkillService | None = None,
        slots: TurnSlots | None = None,
        removals: RemovalsHeard | None = None,
    ) -> None:
        self._db = db
        # Queued messages a former run left start once the members who left are known.
        self._removals = removals or RemovalsHeard()
        # How many turns each team runs at once (None: no limit).
        self._slots = slots or TurnSlots(0)
        # Budgets checked and model requests recorded (None: not counted).
        self._usage = usage
        # The agent's enabled skills, by name and description, in each turn's system prompt.
        self._skills = skills
        self._mcp_tools = mcp_tools
        # The agent's memories without a site, in each turn's system prompt.
        self._memories = memories
        self._memory_prompt_tokens = memory_prompt_tokens
        self._metrics = metrics
        self._clock = clock
        self._agents = agents
        self._attention = attention
        self._announce = announce
        self._resolve_provider = resolve_provider
        self._tool_contexts = tool_contexts
        self._record_provider_error = record_provider_error
        self._task_lists = tasks
        self._workspace = workspace
        self._attachment_max_bytes = attachment_max_bytes
        # Hears ``TurnEnded`` (the memory review).
        self._signals = signals or Signals()
        self._repo = ThreadRepository()
        self._cursors = ReadCursorRepository()
        self._queue = MessageQueue(db, clock, self.emit)
        self._running: dict[str, RunningTurn] = {}
        # Held while a thread's turn starts or ends: a message is queued, or starts a turn,
        # never lost between the two.
        self._thread_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._closing = False
        self._suspensions = SuspendedTurnRepository()
        # Turns a former run of the host put aside, read at start, taken up by ``resume``.
        self._resumable: list[tuple[SuspendedTurn, Thread, Turn]] = []
        self._resumed_turns: set[str] = set()
        # Agents being deleted (team, agent): no queued message of theirs starts a turn.
        self._deleting: set[tuple[str, str]] = set()
        self._tasks = BackgroundTasks("thread service")

    # -- threads ------------------------------------------------------------------------

    async def agent_deletion(self, team_id: str, agent_id: str) -> tuple[int, int]:
        """What deleting the agent takes: all its threads (every member's), and how many of
        them have a turn under way now."""
        await self._agents.get_agent(team_id, agent_id)
        async with self._db.read() as conn:
            thread_ids = await self._repo.list_thread_ids_of_agent(conn, team_id, agent_id)
        running = sum(
            1
            for r in self._running.values()
            if r.thread.team_id == team_id and r.thread.agent_id == agent_id and not r.finished
        )
        return len(thread_ids), running

    async def agent_deleted(self, team_id: str, agent_id: str) -> None:
        """The agent is being deleted: its turns stop, and its threads are idle when this
        returns, so none writes after they are gone. Until ``agent_gone`` no turn of it
        starts (a member's message, a routine, another agent's question, a queued one)."""
        self._deleting.add((team_id, agent_id))
        ours = [
            r.thread.id
            for r in list(self._running.values())
            if r.thread.team_id == team_id and r.thread.agent_id == agent_id
        ]
        for thread_id in ours:
            await self.stop_turn(team_id, thread_id, "its agent was deleted")
            await self.wait_idle(thread_id)

    def agent_gone(self, team_id: str, agent_id: str) -> None:
        """The agent's deletion is over: it is gone, or, having failed, it stays."""
        self._deleting.discard((team_id, agent_id))

    async def _agent(self, team_id: str, agent_id: str) -> Agent:
        """The agent a thread or turn is started for; one being deleted is gone already."""
        if (team_id, agent_id) in self._deleting:
            raise NotFound("no such agent", code="agentNotFound")
        return await self._agents.get_agent(team_id, agent_id)

    async def list_threads(self, team_id: str, agent_id: str, account_id: str) -> list[Thread]:
        await self._agents.get_agent(team_id, agent_id)
        async with self._db.read() as conn:
            return await self._repo.list_threads(conn, team_id, agent_id, account_id)

    async def list_threads_unread(
        self, team_id: str, agent_id: str, account_id: str
    ) -> list[tuple[Thread, int]]:
        """The agent's threads this member sees, each with how many of its turns ended
        since the member last read it."""
        await self._agents.get_agent(team_id, agent_id)
        async with self._db.read() as conn:
            threads = await self._repo.list_threads(conn, team_id, agent_id, account_id)
            unread = await self._cursors.count_unread(
                conn, team_id, account_id, [t.id for t in threads]
            )
        return [(t, unread.get(t.id, 0)) for t in threads]

    async def mark_read(self, team_id: str, thread_id: str, account_id: str) -> None:
        """The member has read the thread up to now."""
        await self._visible_thread(team_id, thread_id, account_id)
        await self._moved_cursor(team_id, thread_id, account_id)

    async def _moved_cursor(self, team_id: str, thread_id: str, account_id: str) -> None:
        async with self._db.write() as conn:
            await self._cursors.update_cursor(
                conn, team_id, thread_id, account_id, self._clock.now()
            )

    async def start_thread(
        self,
        team_id: str,
        agent_id: str,
        account_id: str,
        title: str,
        *,
        shared: bool,
        asked_by: Thread | None = None,
    ) -> Thread:
        """A new thread of ``account_id``'s with the agent; ``asked_by``: the thread whose
        agent asked this one (``ask_agent``), which the new thread names."""
        await self._agent(team_id, agent_id)
        now = self._clock.now()
        thread = Thread(
            uuid.uuid4().hex,
            team_id,
            agent_id,
            account_id,
            shared,
            title,
            now,
            now,
            parent_thread_id=None if asked_by is None else asked_by.id,
            parent_agent_id=None if asked_by is None else asked_by.agent_id,
        )
        async with self._db.write() as conn:
            await self._repo.add_thread(conn, thread)
        self._changed(thread)
        return thread

    async def share(self, team_id: str, thread_id: str, account_id: str, shared: bool) -> Thread:
        """Share a thread with the team, or take it back (its starter only)."""
        return await self._starter_changes(team_id, thread_id, account_id, shared=shared)

    async def rename(self, team_id: str, thread_id: str, account_id: str, title: str) -> Thread:
        """Give a thread a new title (its starter only)."""
        return await self._starter_changes(team_id, thread_id, account_id, title=title)

    async def _starter_changes(
        self,
        team_id: str,
        thread_id: str,
        account_id: str,
        *,
        shared: bool | None = None,
        title: str | None = None,
    ) -> Thread:
        """Writes what is given to a thread its starter changes; anyone else finds no thread."""
        thread = await self._visible_thread(team_id, thread_id, account_id)
        if thread.created_by != account_id:
            raise NotFound("no such thread", code="threadNotFound")
        async with self._db.write() as conn:
            await self._repo.update_thread(
                conn, team_id, thread_id, updated_at=self._clock.now(), shared=shared, title=title
            )
        changed = replace(
            thread,
            shared=thread.shared if shared is None else shared,
            title=thread.title if title is None else title,
        )
        running = self._running.get(thread_id)
        if running is not None:
            # Its turn streams to, and its questions are answered by, who sees it from now on.
            running.thread = changed
        self._changed(changed)
        return changed

    async def read(self, team_id: str, thread_id: str, account_id: str) -> ThreadContents:
        """The thread so far, for a member who sees it: with a running turn's replies and
        tool results so far, and the text of the reply it is streaming."""
        thread = await self._visible_thread(team_id, thread_id, account_id)
        # Reading the thread is reading it: its unread count goes to nought. The queue is
        # read first: a message a turn takes meanwhile is in the transcript read next.
        await self._moved_cursor(team_id, thread_id, account_id)
        queued = await self._queue.list_queued(team_id, thread_id)
        async with self._db.read() as conn:
            stored = await self._repo.list_messages(conn, team_id, thread_id)
            turns = await self._repo.list_turns(conn, team_id, thread_id)
            delegations = await self._repo.list_child_threads(conn, team_id, thread_id)
        messages: list[Message] = [message_from_json(m.body) for m in stored]
        running = self._running.get(thread_id)
        streaming = ""
        # A turn that finished while this read ran has its messages stored already.
        if running is not None and any(
            t.id == running.turn.id and t.status == "running" for t in turns
        ):
            so_far = list(running.progress.new_messages)
            messages += so_far
            streaming = _still_streaming(running.text, so_far)
        else:
            running = None
        return ThreadContents(
            thread,
            messages,
            turns,
            running.turn.id if running else None,
            streaming,
            running is not None and running.waiting,
            self._task_lists.tasks_of(team_id, thread_id),
            queued,
            delegations,
        )

    async def private_member(self, team_id: str, thread_id: str) -> str | None:
        """The member whose private thread it is; None for a shared (or deleted) thread."""
        async with self._db.read() as conn:
            thread = await self._repo.get_thread(conn, team_id, thread_id)
        return None if thread is None or thread.shared else thread.created_by

    async def words(self, team_id: str, thread_id: str) -> list[str]:
        """The agent's words in the thread so far: its replies, then what it streams now."""
        async with self._db.read() as conn:
            stored = await self._repo.list_messages(conn, team_id, thread_id)
        replies = [
            m.text
            for m in (message_from_json(row.body) for row in stored)
            if isinstance(m, AssistantMessage) and m.text
        ]
        running = self._running.get(thread_id)
        if running is None or running.finished or running.thread.team_id != team_id:
            return replies
        so_far = list(running.progress.new_messages)
        replies += [m.text for m in so_far if isinstance(m, AssistantMessage) and m.text]
        streaming = _still_streaming(running.text, so_far)
        return [*replies, streaming] if streaming else replies

    async def asking_chain(self, thread: Thread) -> list[str]:
        """The agents of a chain of asks that reached ``thread``: its own, then the one that
        asked it, and so on up to the first."""
        chain = [thread.agent_id]
        parent_id = thread.parent_thread_id
        async with self._db.read() as conn:
            while parent_id is not None and len(chain) <= MAX_ASKING_CHAIN_READ:
                parent = await self._repo.get_thread(conn, thread.team_id, parent_id)
                if parent is None:
                    break
                chain.append(parent.agent_id)
                parent_id = parent.parent_thread_id
        return chain

    async def transcript(self, team_id: str, thread_id: str) -> list[Message]:
        """A thread's stored messages, for the host's own background readers."""
        async with self._db.read() as conn:
            stored = await self._repo.list_messages(conn, team_id, thread_id)
        return [message_from_json(m.body) for m in stored]

    # -- turns --------------------------------------------------------------------------

    async def send(
        self,
        member: Member,
        thread_id: str,
        text: str,
        attachments: Sequence[str] = (),
    ) -> Turn | QueuedMessage:
        """Store the member's message and start a turn; while one runs, queue the message
        (it starts the next turn when this one ends).

        ``attachments`` are paths of files in the agent's workspace (a member uploads them
        with ``workspace-v1``): each is copied under its hash, typed by its name."""
        team_id, account_id = member.team_id, member.account_id
        thread = await self._visible_thread(team_id, thread_id, account_id)
        agent = await self._agent(team_id, thread.agent_id)
        if len(attachments) > MAX_ATTACHMENTS:
            raise InvalidArgument(
                f"a message may carry at most {MAX_ATTACHMENTS} attachments",
                code="attachmentTooMany",
            )
        files = await self._workspace.import_attachments(
            member, agent.id, attachments, max_bytes=self._attachment_max_bytes
        )
        message = UserMessage(
            text=text, attachments=tuple(_attachment(f) for f in files), account_id=account_id
        )
        ended = self._running.get(thread_id)
        if ended is not None and ended.finished and ended.task is not None:
            # Its end went out already: the message starts a turn once the queue is taken
            # (the queue's oldest first), rather than queue behind a turn that is over.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(ended.task)
        async with self._thread_lock(thread_id):
            running = self._running.get(thread_id)
            if running is not None:
                return await self._queue.add(running.thread, account_id, message)
            if not await self._queue.list_queued(team_id, thread_id):
                await self._check_budgets(team_id, agent, account_id, None)
                return await self._start_turn(thread, agent, message, started_by=account_id)
            # Messages a restart left queued go first: this one joins them, the oldest starts.
            queued = await self._queue.add(thread, account_id, message)
            await self._start_queued(thread)
            return queued

    async def start_unattended(
        self,
        team_id: str,
        agent_id: str,
        *,
        account_id: str,
        text: str,
        title: str,
        shared: bool,
        thread_id: str | None = None,
        unattended: Unattended | None = None,
        started_by: str | None = None,
    ) -> Turn:
        """Start a turn with nobody in the chat (a routine's run) in ``thread_id``, or in a
        new thread of ``account_id``'s when that is None or gone; ``turnRunning`` if one
        runs there. Its consents and questions go to ``unattended.approvers`` when it names
        any (else to whoever sees the thread) and wait ``unattended.attention_seconds``;
        none is approved unless the agent's permissions already say so. Its spending is a
        routine's when it runs for one, else ``started_by``'s (``account_id``'s if None):
        checked against their budgets before it starts, and counted to them as it runs."""
        agent = await self._agent(team_id, agent_id)
        routine_id = unattended.routine_id if unattended is not None else None
        spender = _spender(account_id, started_by, routine_id)
        thread = None
        if thread_id is not None:
            async with self._db.read() as conn:
                thread = await self._repo.get_thread(conn, team_id, thread_id)
        if thread is None or thread.agent_id != agent_id:
            await self._check_budgets(team_id, agent, spender, routine_id)
            thread = await self.start_thread(team_id, agent_id, account_id, title, shared=shared)
        async with self._thread_lock(thread.id):
            if thread.id in self._running:
                raise Conflict("the agent is still answering; stop it or wait", code="turnRunning")
            await self._check_budgets(team_id, agent, spender, routine_id)
            return await self._start_turn(
                thread, agent, UserMessage(text=text), unattended=unattended, started_by=spender
            )

    async def start_asked(
        self,
        team_id: str,
        agent_id: str,
        *,
        account_id: str,
        text: str,
        title: str,
        shared: bool = False,
        asked_by: Thread | None = None,
    ) -> Turn:
        """A new thread of ``account_id``'s with the agent and a turn for ``text`` in it: an
        outside agent's question (MCP), or another agent's task (``asked_by``: the asking
        thread, whose turn's approvers, if it names any, answer this one's requests)."""
        asking = None if asked_by is None else self._running.get(asked_by.id)
        unattended = None
        if asking is not None:
            unattended = Unattended(
                asking.approvers or (),
                asking.attention_seconds,
                asking.routine_id,
                on_callers_place=True,
            )
        # Another agent's task is spent by whoever started the asking turn.
        started_by = None if asking is None else asking.started_by
        routine_id = None if asking is None else asking.routine_id
        agent = await self._agent(team_id, agent_id)
        await self._check_budgets(
            team_id, agent, _spender(account_id, started_by, routine_id), routine_id
        )
        title = title[:MAX_TITLE_CHARS]
        thread = await self.start_thread(
            team_id, agent_id, account_id, title, shared=shared, asked_by=asked_by
        )
        return await self.start_unattended(
            team_id,
            agent_id,
            account_id=account_id,
            text=text,
            title=title,
            shared=shared,
            thread_id=thread.id,
            unattended=unattended,
            started_by=started_by,
        )

    async def ended_turn(self, team_id: str, thread_id: str, turn_id: str) -> Turn | None:
        """A turn once it has ended (None if its thread or the turn is gone)."""
        await self.wait_idle(thread_id)
        async with self._db.read() as conn:
            turns = await self._repo.list_turns(conn, team_id, thread_id)
        return next((t for t in turns if t.id == turn_id), None)

    async def _start_turn(
        self,
        thread: Thread,
        agent: Agent,
        message: UserMessage,
        *,
        turn_id: str | None = None,
        unattended: Unattended | None = None,
        started_by: str = "",
        queued: bool = False,
    ) -> Turn:
        """Store ``message`` and start its turn (the thread's lock is held); those who see
        the thread are shown the message with the start, unless it was ``queued`` (its
        taking showed it)."""
        team_id, thread_id = thread.team_id, thread.id
        if (team_id, agent.id) in self._deleting:
            raise NotFound("no such agent", code="agentNotFound")
        now = self._clock.now()
        turn_id = turn_id or uuid.uuid4().hex
        turn = Turn(turn_id, team_id, thread_id, "running", None, 0, 0, 0, now, None)
        # An untitled thread is titled from its first message.
        title = None if thread.title else title_from_message(message.text)
        if title is not None:
            thread = replace(thread, title=title)
        running = RunningTurn(turn, thread, started_by=started_by, unattended=unattended)
        self._running[thread_id] = running  # claimed before any wait: one turn per thread
        try:
            async with self._db.write() as conn:
                seq = await self._repo.next_seq(conn, team_id, thread_id)
                await self._repo.add_messages(conn, [self._stored(thread, seq, message, now)])
                await self._repo.add_turn(conn, turn)
                await self._repo.update_thread(
                    conn, team_id, thread_id, updated_at=now, title=title
                )
        except BaseException:
            del self._running[thread_id]
            raise
        if title is not None:
            self._changed(thread)
        shown = None
        if not queued:
            shown = events.StartingMessage(
                account_id=message.account_id,
                text=message.text,
                attachments=[a.name for a in message.attachments],
            )
        self.emit(
            thread, events.TurnStarted(thread_id=thread_id, turn_id=turn.id, user_message=shown)
        )
        running.task = self._tasks.spawn(self._run(running, agent))
        return turn

    async def _next_turn(self, ended: RunningTurn) -> None:
        """The turn ``ended`` is over: the thread's oldest queued message starts the next
        one; with none queued (or the host stopping) the thread is idle."""
        thread_id = ended.thread.id
        async with self._thread_lock(thread_id):
            started = False
            try:
                thread = ended.thread
                if not self._closing and (thread.team_id, thread.agent_id) not in self._deleting:
                    # The thread stays claimed by ``ended`` until the next turn claims it.
                    started = await self._start_queued(thread)
            except Exception:
                log.exception("could not start a queued message", extra={"thread_id": thread_id})
            finally:
                if not started and self._running.get(thread_id) is ended:
                    del self._running[thread_id]

    async def _start_queued(self, thread: Thread) -> bool:
        """The thread's oldest queued message starts its next turn (the thread's lock is
        held, and no turn runs there but the one that just ended); False when none waits,
        or when the host has not yet heard who left while its link was down (its sender may
        have): then the queue starts once it has."""
        if not self._removals.known:
            self._tasks.start(self._start_queue_once_known(thread.team_id, thread.id))
            return False
        agent = await self._agents.get_agent(thread.team_id, thread.agent_id)
        # The turn's id is known before it is taken, so the taken event names it.
        queued = await self._queue.take_next(thread, turn_id := uuid.uuid4().hex)
        if queued is None:
            return False
        # Its sender's turn: their budgets count it (its meter ends it if one is spent).
        await self._start_turn(
            thread,
            agent,
            user_message(queued),
            turn_id=turn_id,
            started_by=queued.account_id,
            queued=True,
        )
        return True

    async def _check_budgets(
        self, team_id: str, agent: Agent, account_id: str, routine_id: str | None
    ) -> None:
        """``budgetExceeded`` when a budget that concerns a new turn is spent (checked
        before a thread is made for it: a refused turn leaves none behind)."""
        if self._usage is not None:
            await self._usage.check_start(
                self._request_for(
                    team_id, "", agent, None, account_id, routine_id, agent.model or ""
                )
            )

    @staticmethod
    def _request_for(
        team_id: str,
        thread_id: str,
        agent: Agent,
        turn_id: str | None,
        account_id: str,
        routine_id: str | None,
        model: str,
    ) -> RequestFor:
        return RequestFor(
            team_id=team_id,
            agent_id=agent.id,
            thread_id=thread_id,
            turn_id=turn_id,
            account_id=account_id,
            routine_id=routine_id or "",
            provider_id=agent.provider,
            model=model,
        )

    def _thread_lock(self, thread_id: str) -> asyncio.Lock:
        lock = self._thread_locks.get(thread_id)
        if lock is None:
            lock = self._thread_locks[thread_id] = asyncio.Lock()
        return lock

    async def edit_queued(
        self,
        team_id: str,
        thread_id: str,
        account_id: str,
        message_id: str,
        *,
        text: str | None = None,
        steer: bool | None = None,
    ) -> QueuedMessage:
        """Change a queued message's text, or whether it steers the running turn (its
        sender only, until a turn takes it)."""
        thread = await self._visible_thread(team_id, thread_id, account_id)
        return await self._queue.edit(thread, account_id, message_id, text=text, steer=steer)

    async def cancel_queued(
        self, team_id: str, thread_id: str, account_id: str, message_id: str
    ) -> None:
        """Take a queued message back (its sender only, until a turn takes it)."""
        thread = await self._visible_thread(team_id, thread_id, account_id)
        await self._queue.cancel(thread, account_id, message_id)

    async def _steering(self, running: RunningTurn) -> list[UserMessage]:
        """The queued messages marked to steer: they join the running turn now."""
        return await self._queue.take_steering(running.thread, running.turn.id)

    async def stop(self, team_id: str, thread_id: str, account_id: str) -> bool:
        """Stop the thread's running turn; False when none runs."""
        await self._visible_thread(team_id, thread_id, account_id)
        return await self.stop_turn(team_id, thread_id, "a member stopped the turn")

    async def stop_turn(self, team_id: str, thread_id: str, reason: str) -> bool:
        """Stop the thread's running turn, saying why (the host's own stops: an asking
        agent's); False when none runs."""
        running = self._running.get(thread_id)
        if (
            running is None
            or running.task is None
            or running.ending
            or running.thread.team_id != team_id
        ):
            return False
        running.progress.end("stopped", reason)
        self._attention.cancel_thread(team_id, thread_id)
        running.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(running.task)
        return True

    async def wait_idle(self, thread_id: str) -> None:
        """Until the thread has no running turn, those its queue starts included (tests
        and shutdown)."""
        while (running := self._running.get(thread_id)) is not None and running.task:
            try:
                await asyncio.shield(running.task)
            except asyncio.CancelledError:
                waiter = asyncio.current_task()
                if waiter is not None and waiter.cancelling():
                    raise  # the waiter was cancelled (stopped, or out of time), not the turn

    async def recover(self) -> None:
        """At start-up, before anything is served: the turns a former run of the host put
        aside are read, to be taken up by ``resume``; every other turn and request it left
        under way (it crashed) ends ``interrupted``: nothing waits for them any more."""
        resumable: list[tuple[SuspendedTurn, Thread, Turn]] = []
        async with self._db.write() as conn:
            for suspended in await self._suspensions.take_every_turn(conn):
                team_id, thread_id = suspended.team_id, suspended.thread_id
                thread = await self._repo.get_thread(conn, team_id, thread_id)
                turns = await self._repo.list_turns(conn, team_id, thread_id)
                turn = next((t for t in turns if t.id == suspended.turn_id), None)
                if thread is not None and turn is not None and turn.status == "running":
                    resumable.append((suspended, thread, turn))
            await self._repo.update_running_turns(
                conn,
                status="interrupted",
                reason=INTERRUPTED,
                ended_at=self._clock.now(),
                keep={turn.id for _, _, turn in resumable},
            )
        await self._attention.recover(keep={s.request_id for s, _, _ in resumable})
        self._resumable = resumable
        self._resumed_turns = {turn.id for _, _, turn in resumable}

    def resume(self) -> None:
        """At start-up, once the host can run turns: each turn ``recover`` read is taken up
        where it was put aside, waiting for the same consent; in every other thread whose
        queue holds a message (its turn ended as the host stopped), the oldest starts the
        next turn."""
        resumable, self._resumable = self._resumable, []
        for suspended, thread, turn in resumable:
            progress = TurnProgress(
                tool_calls=turn.tool_calls,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
            )
            unattended = None
            if suspended.approvers or suspended.attention_seconds or suspended.routine_id:
                unattended = Unattended(
                    suspended.approvers or (), suspended.attention_seconds, suspended.routine_id
                )
            running = RunningTurn(
                turn,
                thread,
                progress=progress,
                started_by=suspended.started_by,
                unattended=unattended,
                resumed=suspended,
            )
            self._running[thread.id] = running
            self.emit(thread, events.TurnStarted(thread_id=thread.id, turn_id=turn.id))
            running.task = self._tasks.spawn(self._resumed(running))
        self._tasks.start(self._start_waiting_queues())

    async def _start_queue_once_known(self, team_id: str, thread_id: str) -> None:
        """The idle thread's queue starts its oldest message once the members who left
        while the link was down are known."""
        await self._removals.wait()
        async with self._thread_lock(thread_id):
            if thread_id in self._running or self._closing:
                return
            async with self._db.read() as conn:
                thread = await self._repo.get_thread(conn, team_id, thread_id)
            if thread is not None:
                await self._start_queued(thread)

    async def _start_waiting_queues(self) -> None:
        """Each idle thread's queue left by a former run starts its oldest message, once the
        members who left while the link was down are known (their messages go)."""
        await self._removals.wait()
        for team_id, thread_id in await self._queue.waiting_threads():
            try:
                await self._start_queue_once_known(team_id, thread_id)
            except Exception:
                log.exception("could not start a queued message", extra={"thread_id": thread_id})

    async def member_removed(self, signal: MemberRemoved) -> None:
        """A member left the team: their queued messages go (each would start a turn as
        them), and who sees those threads hears so."""
        removed = await self._queue.remove_sender(signal.team_id, signal.account_id)
        for thread_id in dict.fromkeys(q.thread_id for q in removed):
            async with self._db.read() as conn:
                thread = await self._repo.get_thread(conn, signal.team_id, thread_id)
            if thread is None:
                continue
            for queued in removed:
                if queued.thread_id == thread_id:
                    cancelled = events.QueuedMessageCancelled(thread_id=thread_id, id=queued.id)
                    self.emit(thread, cancelled)

    async def named_members(self) -> dict[tuple[str, str], float]:
        """(team, account) of every member whose queued message waits, in every team, with
        when the oldest was queued."""
        return await self._queue.senders()

    def resumes(self, turn_id: str) -> bool:
        """Whether this start took up the turn ``turn_id`` (a former run put it aside)."""
        return turn_id in self._resumed_turns

    async def _resumed(self, running: RunningTurn) -> None:
        """A turn taken up again runs as any turn, from the calls of its last reply that had
        not run (read first: whatever ends it, those calls are closed in its transcript); one
        whose agent is gone, or whose transcript no longer ends at its call, ends here."""
        thread, progress = running.thread, running.progress
        agent = None
        try:
            agent = await self._agents.get_agent(thread.team_id, thread.agent_id)
            async with self._db.read() as conn:
                stored = await self._repo.list_messages(conn, thread.team_id, thread.id)
            transcript = [message_from_json(m.body) for m in stored]
            progress.pending = tuple(TurnProgress(new_messages=transcript).unanswered_calls())
        except NotFound:
            progress.end("interrupted", "the agent was deleted while the host stopped")
        except asyncio.CancelledError:
            progress.end("stopped", "a member stopped the turn")
        except Exception as exc:
            log.exception("a turn could not be taken up", extra={"thread_id": thread.id})
            progress.end("error", _readable(exc))
        assert running.resumed is not None
        if not progress.pending or progress.pending[0].id != running.resumed.call_id:
            progress.end("interrupted", INTERRUPTED)
        if agent is not None and not progress.ended:
            await self._run(running, agent)
            return
        running.ending = True
        try:
            if running.suspended:  # the host stops again at once: put aside as it was
                await self._suspend(running)
            else:
                await self._finish(running)
        finally:
            await self._next_turn(running)

    async def close(self) -> None:
        """The host stops: a turn that waits for consent is put aside, to be taken up at
        the next start; other running turns end ``interrupted`` (their requests too), and
        no queued message starts a turn."""
        self._closing = True
        self._attention.closing()
        for running in list(self._running.values()):
            running.kept = self._kept_consent(running)
            running.progress.end("interrupted", INTERRUPTED)
        await self._tasks.close()

    def _kept_consent(self, running: RunningTurn) -> KeptConsent | None:
        """The consent ``running`` waits for, kept waiting for the next start; None when it
        waits for none, or it cannot be taken up again: a turn another turn waits for (that
        one is not put aside), or one whose call in progress is not its own (a sub-agent's)."""
        if running.task is None or running.ending or running.on_callers_place:
            return None
        thread, resumed = running.thread, running.resumed
        unanswered = running.progress.unanswered_calls()
        if resumed is not None and running.resuming():
            # Taken up at this start, not yet past its call: the request that waits for it
            # now, or the one kept for it, stays.
            request = self._attention.keep(thread.team_id, thread.id, resumed.call_id)
            if request is None:
                return KeptConsent(resumed.request_id, resumed.call_id)
        elif not unanswered:
            return None
        else:
            request = self._attention.keep(thread.team_id, thread.id, unanswered[0].id)
        return None if request is None else KeptConsent(request.id, request.call_id, request)

    async def _suspend(self, running: RunningTurn) -> None:
        """Keep the turn put aside: its messages so far (its waiting call without a result),
        its counts, and what it was started with."""
        thread, progress = running.thread, running.progress
        assert running.kept is not None
        now = self._clock.now()
        turn = replace(
            running.turn,
            tool_calls=progress.tool_calls,
            input_tokens=progress.input_tokens,
            output_tokens=progress.output_tokens,
        )
        unattended = running.unattended
        suspended = SuspendedTurn(
            turn_id=turn.id,
            team_id=thread.team_id,
            thread_id=thread.id,
            agent_id=thread.agent_id,
            request_id=running.kept.request_id,
            call_id=running.kept.call_id,
            started_by=running.started_by,
            approvers=(unattended.approvers or None) if unattended is not None else None,
            attention_seconds=unattended.attention_seconds if unattended is not None else None,
            routine_id=unattended.routine_id if unattended is not None else None,
            suspended_at=now,
        )
        async with self._db.write() as conn:
            seq = await self._repo.next_seq(conn, thread.team_id, thread.id)
            await self._repo.add_messages(
                conn,
                [
                    self._stored(thread, seq + i, m, now)
                    for i, m in enumerate(progress.new_messages)
                ],
            )
            await self._repo.update_turn(conn, turn)
            await self._suspensions.add_turn(conn, suspended)
        running.finished = True

    async def _run(self, running: RunningTurn, agent: Agent) -> None:
        thread, progress = running.thread, running.progress
        sink = _Sink(self, running)
        try:
            async with self._place(running):
                await self._turn(running, agent, sink)
        except asyncio.CancelledError:
            progress.end("stopped", "a member stopped the turn")
        except Exception as exc:
            # A turn ends in a status, never in an exception the host has to survive.
            log.exception("turn failed", extra={"thread_id": thread.id})
            code = exc.code if isinstance(exc, CrewhostError) else None
            progress.end("error", _readable(exc), code)
        finally:
            running.ending = True  # no stop cancels storing its end
            sink.flush()
            try:
                # Before the turn's end goes out: whoever sees it can read the provider's status.
                await self._note_provider(thread.team_id, agent.provider, progress)
                if running.suspended:
                    await self._suspend(running)
                else:
                    await self._finish(running)
                    self._signals.publish(TurnEnded(agent, thread.id))
            finally:
                await self._next_turn(running)

    @contextlib.asynccontextmanager
    async def _place(self, running: RunningTurn) -> AsyncIterator[None]:
        """One of the team's places for the turn, said to the thread while it waits; a turn
        another turn asked for runs on its caller's."""
        if running.on_callers_place:
            yield
            return
        thread, turn_id = running.thread, running.turn.id

        def waits(ahead: int) -> None:
            running.waiting = True
            self._metrics.turns_waited.inc()
            self.emit(thread, events.TurnWaiting(thread_id=thread.id, turn_id=turn_id, ahead=ahead))

        async with self._slots.place(thread.team_id, waits):
            if running.waiting:
                running.waiting = False
                self.emit(thread, events.TurnRunning(thread_id=thread.id, turn_id=turn_id))
            yield

    async def _turn(self, running: RunningTurn, agent: Agent, sink: _Sink) -> None:
        """The turn's work, once it holds one of the team's places."""
        thread, progress = running.thread, running.progress
        provider, default_model = await self._resolve_provider(thread.team_id, agent.provider)
        async with self._db.read() as conn:
            stored = await self._repo.list_messages(conn, thread.team_id, thread.id)
        transcript = [await self._with_images(thread, message_from_json(m.body)) for m in stored]
        # Taken up again: the calls of its last reply that had not run (``_resumed``), the
        # one that waits for consent first.
        pending = progress.pending
        if pending:
            progress.calls_named = max(_call_number(running.turn.id, c.id) for c in pending)
        model = agent.model or default_model
        # A private thread's turns see its member's memories too; a shared one's, the team's.
        member = None if thread.shared else thread.created_by
        memories = ""
        if self._memories is not None:
            block = await self._memories.prompt_block(
                thread.team_id, agent.id, member, self._memory_prompt_tokens
            )
            memories = block.text
        skills = (
            await self._skills.prompt_block(thread.team_id, agent.id)
            if self._skills is not None
            else ""
        )

        def visible_to(account_id: str) -> bool:
            # Read at each question: sharing the thread, or taking it back, applies.
            return running.thread.visible_to(account_id)

        # Counts the turn's model requests, and its tools' (a web tool's prompt).
        meter = (
            None
            if self._usage is None
            else self._usage.for_turn(
                self._request_for(
                    thread.team_id,
                    thread.id,
                    agent,
                    running.turn.id,
                    running.started_by,
                    running.routine_id,
                    model,
                )
            )
        )
        context = await self._tool_contexts.for_turn(
            thread.team_id,
            Caller.agent(agent.id, thread.id),
            visible_to=visible_to,
            memory_member=member,
            turn_id=running.turn.id,
            summarize=summarizer(provider, model, meter),
            ask_person=lambda question: self._ask_person(running, agent, question),
            tasks=self._task_lists.for_thread(thread.team_id, thread.id, visible_to),
            # ``setup`` is made below, before the model can ask for a sub-agent.
            spawn_sub_agent=lambda request: self._sub_agent(running, agent, setup, request),
            unattended=running.unattended,
            delegation=TurnDelegation(
                self,
                self._agents,
                self._workspace,
                agent=agent,
                thread=lambda: running.thread,
                turn_id=running.turn.id,
            ),
        )
        setup = TurnSetup(
            provider=provider,
            model=model,
            system=system_prompt(agent.instructions, memories, skills),
            transcript=transcript,
            context=context,
            permissions=agent.permissions,
            max_tool_calls=agent.max_tool_calls or DEFAULT_MAX_TOOL_CALLS,
            call_id_prefix=running.turn.id,
            steer=lambda: self._steering(running),
            extra_tools=(
                None if self._mcp_tools is None else await self._mcp_tools(thread.team_id, agent.id)
            ),
            meter=meter,
            pending_calls=pending,
        )
        await run_turn(setup, sink, functools.partial(self._consent, running, agent), progress)

    async def _note_provider(self, team_id: str, provider_id: str, progress: TurnProgress) -> None:
        """The provider's status shows its last failure until it answers again."""
        if progress.provider_answered is None:
            return
        try:
            await self._record_provider_error(team_id, provider_id, progress.provider_failure)
        except Exception:
            log.exception("could not record the provider's status", extra={"team_id": team_id})

    async def _finish(self, running: RunningTurn) -> None:
        thread, progress = running.thread, running.progress
        progress.end("error", "the turn ended without a status")
        if running.resumed is not None:
            # Taken up again and ended before its call was asked for: the kept request ends.
            ended: Literal["cancelled", "interrupted"] = (
                "cancelled" if progress.status == "stopped" else "interrupted"
            )
            await self._attention.end_kept(thread.team_id, running.resumed.request_id, ended)
            running.resumed = None
        now = self._clock.now()
        messages = progress.closed_messages()
        turn = Turn(
            running.turn.id,
            thread.team_id,
            thread.id,
            progress.status or "error",
            progress.reason,
            progress.tool_calls,
            progress.input_tokens,
            progress.output_tokens,
            running.turn.started_at,
            now,
            progress.code,
        )
        try:
            async with self._db.write() as conn:
                seq = await self._repo.next_seq(conn, thread.team_id, thread.id)
                await self._repo.add_messages(
                    conn,
                    [self._stored(thread, seq + i, m, now) for i, m in enumerate(messages)],
                )
                await self._repo.update_turn(conn, turn)
                await self._repo.update_thread(conn, thread.team_id, thread.id, updated_at=now)
        finally:
            # The thread stays claimed (``_running``) until ``_next_turn`` takes its queue.
            running.finished = True
        self._metrics.turns.labels(turn.status).inc()
        for outcome, seconds in progress.provider_requests:
            self._metrics.provider_seconds.labels(outcome).observe(seconds)
        self.emit(
            thread,
            events.TurnFinished(
                thread_id=thread.id,
                turn_id=turn.id,
                status=turn.status,  # type: ignore[arg-type]
                reason=turn.reason,
                code=turn.code,
                tool_calls=turn.tool_calls,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
            ),
        )

    async def _consent(
        self, running: RunningTurn, agent: Agent, call: ToolCall, description: str | None
    ) -> bool:
        thread = running.thread
        kept_id = None
        resumed = running.resumed
        if resumed is not None and call.id == resumed.call_id:
            # Taken up again: the request kept across the restart waits for its answer.
            kept_id = resumed.request_id
        elif resumed is not None:
            # The call it was taken up at ran unasked (its tool no longer asks): the request
            # kept for it ends.
            running.resumed = None
            await self._attention.end_kept(thread.team_id, resumed.request_id, "interrupted")
        approved = await self._attention.ask_consent(
            team_id=thread.team_id,
            thread_id=thread.id,
            agent_id=agent.id,
            call_id=call.id,
            tool=call.name,
            arguments=call.arguments,
            summary=consent_summary(call),
            description=description,
            # Read at each answer: sharing the thread, or taking it back, applies at once.
            visible_to=lambda account_id: running.thread.visible_to(account_id),
            expires_in=running.attention_seconds,
            addressed_to=running.approvers,
            routine_id=running.routine_id,
            kept_id=kept_id,
        )
        if kept_id is not None:
            running.resumed = None  # asked for: the kept request has its end, or waits on
        return approved

    async def _with_images(self, thread: Thread, message: Message) -> Message:
        """A member's message with its image attachments loaded as image blocks (those
        still there with the bytes that were sent, and small enough for a provider)."""
        if not isinstance(message, UserMessage):
            return message
        ref = WorkspaceRef(thread.team_id, thread.agent_id)
        images = []
        for attachment in message.attachments:
            if attachment.kind != "image" or attachment.size > MAX_IMAGE_BLOCK_BYTES:
                continue
            data = await self._workspace.read_attachment(ref, attachment.path, attachment.sha256)
            if data is None:
                continue
            encoded = base64.b64encode(data).decode()
            images.append(
                ImageBlock(sha256=attachment.sha256, media_type=attachment.mime_type, data=encoded)
            )
        return message.model_copy(update={"images": tuple(images)}) if images else message

    async def attachment_preview(
        self, member: Member, thread_id: str, sha256: str
    ) -> tuple[Attachment, str]:
        """An attachment of the thread with a preview, and its preview as a ``data:`` URL:
        never a link into the app's own origin, where an SVG's scripts could run."""
        thread = await self._visible_thread(member.team_id, thread_id, member.account_id)
        async with self._db.read() as conn:
            stored = await self._repo.list_messages(conn, member.team_id, thread_id)
        for row in stored:
            message = message_from_json(row.body)
            if not isinstance(message, UserMessage):
                continue
            for attachment in message.attachments:
                if attachment.sha256 != sha256:
                    continue
                if attachment.preview_kind != "image" or attachment.size > MAX_PREVIEW_BYTES:
                    raise Conflict("this attachment has no preview", code="attachmentNoPreview")
                ref = WorkspaceRef(thread.team_id, thread.agent_id)
                data = await self._workspace.read_attachment(ref, attachment.path, sha256)
                if data is None:
                    break
                encoded = base64.b64encode(data).decode()
                return attachment, f"data:{attachment.mime_type};base64,{encoded}"
        raise NotFound("no such attachment in this thread", code="attachmentNotFound")

    async def _ask_person(
        self, running: RunningTurn, agent: Agent, question: PersonQuestion
    ) -> tuple[str | list[str] | None, str]:
        thread = running.thread
        return await self._attention.ask_question(
            team_id=thread.team_id,
            thread_id=thread.id,
            agent_id=agent.id,
            call_id=question.call_id,
            question=question.question,
            options=question.options,
            multiple=question.multiple,
            visible_to=lambda account_id: running.thread.visible_to(account_id),
            expires_in=running.attention_seconds,
            addressed_to=running.approvers,
            routine_id=running.routine_id,
        )

    async def _sub_agent(
        self, running: RunningTurn, agent: Agent, parent: TurnSetup, request: SubAgentRequest
    ) -> SubAgentReport | None:
        """A sub-agent of the running turn, told in its thread, asking the same members."""
        thread, turn = running.thread, running.turn
        return await run_sub_agent(
            parent,
            running.progress,
            request,
            instructions=agent.instructions,
            consent=functools.partial(self._consent, running, agent),
            tell=lambda event: self.emit(running.thread, event),
            thread_id=thread.id,
            turn_id=turn.id,
        )

    # -- helpers ------------------------------------------------------------------------

    async def _visible_thread(self, team_id: str, thread_id: str, account_id: str) -> Thread:
        async with self._db.read() as conn:
            thread = await self._repo.get_thread(conn, team_id, thread_id)
        if thread is None or not thread.visible_to(account_id):
            raise NotFound("no such thread", code="threadNotFound")
        return thread

    def _stored(self, thread: Thread, seq: int, message: Message, now: float) -> StoredMessage:
        return StoredMessage(
            uuid.uuid4().hex,
            thread.team_id,
            thread.id,
            seq,
            message.role,
            message_to_json(message),
            now,
        )

    def emit(self, thread: Thread, event: events.HostEvent) -> None:
        """Send ``event`` to the team's members who see ``thread``."""
        self._announce(thread.team_id, event, thread.visible_to)

    def _changed(self, thread: Thread) -> None:
        self.emit(thread, events.ThreadsChanged(agent_id=thread.agent_id, thread_id=thread.id))


def _still_streaming(streamed: Sequence[str], replies: Sequence[Message]) -> str:
    """The running turn's text that no finished reply of it holds yet (none when a retried
    reply makes the two disagree)."""
    text = "".join(streamed)
    said = "".join(m.text for m in replies if isinstance(m, AssistantMessage))
    return text[len(said) :] if text.startswith(said) else ""


class _Sink:
    """Streams a turn to the members who see its thread; text is batched about every 30 ms:
    the first delta goes at once, later ones wait for the end of the window."""

    def __init__(self, service: ThreadService, running: RunningTurn) -> None:
        self._service = service
        self._running = running
        self._pending: list[str] = []
        self._window: asyncio.TimerHandle | None = None
        # Whether text of the reply being streamed went out (a reset must then follow it).
        self._reply_sent = False

    def text(self, delta: str) -> None:
        self._running.text.append(delta)
        self._pending.append(delta)
        if self._window is None:
            self.flush()
            self._window = asyncio.get_running_loop().call_later(
                TEXT_BATCH_SECONDS, self._window_ended
            )

    def _window_ended(self) -> None:
        self._window = None
        if self._pending:
            self.flush()
            self._window = asyncio.get_running_loop().call_later(
                TEXT_BATCH_SECONDS, self._window_ended
            )

    def flush(self) -> None:
        if not self._pending:
            if self._window is not None:
                self._window.cancel()
                self._window = None
            return
        text, self._pending = "".join(self._pending), []
        thread, turn = self._running.thread, self._running.turn
        self._reply_sent = True
        self._service.emit(
            thread, events.TextDelta(thread_id=thread.id, turn_id=turn.id, text=text)
        )

    def text_reset(self, reason: str) -> None:
        # The broken reply's text leaves the running text too, so a member who reads the
        # thread midway reads only what the new reply says.
        running = self._running
        said = "".join(
            m.text for m in running.progress.new_messages if isinstance(m, AssistantMessage)
        )
        running.text[:] = [said] if said else []
        self._pending = []
        if self._reply_sent:
            self._reply_sent = False
            thread, turn = running.thread, running.turn
            self._service.emit(
                thread, events.TextReset(thread_id=thread.id, turn_id=turn.id, reason=reason)
            )

    def tool_started(self, call: ToolCall, summary: str, card: CallCard) -> None:
        self.flush()
        self._reply_sent = False
        thread, turn = self._running.thread, self._running.turn
        self._service.emit(
            thread,
            events.ToolCallStarted(
                thread_id=thread.id,
                turn_id=turn.id,
                call_id=call.id,
                tool=call.name,
                summary=summary,
                tab_id=card.tab_id,
                description=card.description,
            ),
        )

    def tool_finished(
        self, call: ToolCall, outcome: ToolOutcome, summary: str, card: CallCard
    ) -> None:
        self.flush()
        self._reply_sent = False
        thread, turn = self._running.thread, self._running.turn
        self._service.emit(
            thread,
            events.ToolCallFinished(
                thread_id=thread.id,
                turn_id=turn.id,
                call_id=call.id,
                tool=call.name,
                outcome=outcome,
                summary=summary,
                description=card.description,
                tab_id=card.tab_id,
                tab_title=card.tab_title,
            ),
        )


def _readable(exc: Exception) -> str:
    if isinstance(exc, CrewhostError):
        return exc.message
    return f"the turn failed on the host ({type(exc).__name__})"


def _attachment(file: ImportedFile) -> Attachment:
    return Attachment(
        name=file.name,
        path=file.path,
        mime_type=file.mime,
        kind=file.kind,
        preview_kind=file.preview,
        size=file.size,
        sha256=file.sha256,
    )


def _spender(account_id: str, started_by: str | None, routine_id: str | None) -> str:
    """Whose budget an unattended turn spends: none of a member's for a routine's run (its
    routine's), else ``started_by``'s, or the thread's member's when that is None."""
    if routine_id:
        return ""
    return account_id if started_by is None else started_by


def _call_number(turn_id: str, call_id: str) -> int:
    """The number in the host's id of a turn's call (``<turn>.<n>``): a turn taken up again
    names its next calls after the last, so no id repeats."""
    number = call_id.removeprefix(f"{turn_id}.")
    return int(number) if number.isdigit() else 0
