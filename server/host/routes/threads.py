"""``threads-v1``: a member's conversations with an agent, and the turns they start."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints

from server.common.protocol.capabilities import ATTACHMENT_CAPABILITIES
from server.common.protocol.events import QueuedMessageItem, TaskItem
from server.common.protocol.ids import AgentId, ThreadId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel, no_control_characters
from server.host.agents.message_queue import item
from server.host.agents.providers.transcript import PROVIDER_ONLY
from server.host.agents.threads import MAX_ATTACHMENTS, MAX_MESSAGE_CHARS
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.queued_messages import QueuedMessage
from server.host.storage.threads import Thread, Turn
from server.host.workspace.paths import MAX_PATH_CHARS

routes = HostRouteTable("threads-v1", also=ATTACHMENT_CAPABILITIES)

Title = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=200),
    AfterValidator(no_control_characters),
]
MessageText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MESSAGE_CHARS)
]


class ThreadView(WireModel):
    id: str
    agent_id: str
    created_by: str
    shared: bool
    title: str
    created_at: float
    updated_at: float
    parent_thread_id: str | None = Field(
        None, description="The thread whose agent asked this one (ask_agent); null: none."
    )
    parent_agent_id: str | None = Field(None, description="The agent that asked; null: none.")


class ListedThread(ThreadView):
    unread: int = Field(description="How many of its turns ended since the caller read it.")


class ThreadList(WireModel):
    threads: list[ListedThread]


class TurnView(WireModel):
    id: str
    status: str = Field(description="running, done, denied, capped, incomplete, stopped or error")
    reason: str | None
    code: str | None = Field(
        None, description="An error's stable code, as in turn-finished (providerKeyMissing, …)"
    )
    tool_calls: int
    input_tokens: int
    output_tokens: int
    started_at: float
    ended_at: float | None


class DelegationItem(WireModel):
    thread_id: str = Field(description="The thread the asked agent works in.")
    agent_id: str = Field(description="The agent asked.")
    title: str
    created_at: float


class ThreadContentsView(WireModel):
    thread: ThreadView
    messages: list[dict[str, Any]] = Field(
        description="The transcript: user, assistant (text and tool calls) and tool messages."
    )
    turns: list[TurnView]
    running_turn_id: str | None
    running_text: str = Field(description="What the running turn has said so far.")
    running_turn_waiting: bool = Field(
        False,
        description="The running turn waits for one of the team's places "
        "(host.team_running_turns); turn-running follows when it runs.",
    )
    tasks: list[TaskItem] = Field(description="The agent's task list in this thread.")
    queued: list[QueuedMessageItem] = Field(
        description="Messages waiting for the running turn to end, oldest first."
    )
    delegations: list[DelegationItem] = Field(
        description="The threads this thread's ask_agent calls started, oldest first."
    )


class TurnStartedView(WireModel):
    turn_id: str | None = Field(description="The turn the message started; null when queued.")
    queued: QueuedMessageItem | None = Field(
        None, description="The message as queued, when a turn was running."
    )


class QueuedView(WireModel):
    queued: QueuedMessageItem


class Done(WireModel):
    ok: bool


class TurnStopped(WireModel):
    stopped: bool


class AgentThreads(InboundModel):
    agent_id: AgentId


class StartThread(InboundModel):
    agent_id: AgentId
    title: Title = ""
    shared: bool = False


class ThreadRef(InboundModel):
    thread_id: ThreadId


class AttachmentRef(InboundModel):
    """A file of the agent's workspace to attach (uploaded with ``workspace-v1``)."""

    path: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PATH_CHARS)]
    mime_type: Annotated[str, StringConstraints(max_length=255)] | None = Field(
        None, description="Ignored: an attachment's type comes from its name only."
    )


class SendMessage(InboundModel):
    thread_id: ThreadId
    text: MessageText
    attachments: list[AttachmentRef] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)


class QueuedRef(InboundModel):
    thread_id: ThreadId
    id: ThreadId = Field(description="The queued message's id.")


class EditQueued(QueuedRef):
    text: MessageText


class SteerQueued(QueuedRef):
    steer: bool = True


class PreviewRef(InboundModel):
    thread_id: ThreadId
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class AttachmentPreview(WireModel):
    name: str
    mime_type: str
    data_url: str = Field(description="The preview as a data: URL, the only form it is sent in.")


class RenameThread(InboundModel):
    thread_id: ThreadId
    title: Annotated[Title, StringConstraints(min_length=1)]


class ShareThread(InboundModel):
    thread_id: ThreadId
    shared: bool


def _thread(thread: Thread) -> ThreadView:
    return ThreadView(
        id=thread.id,
        agent_id=thread.agent_id,
        created_by=thread.created_by,
        shared=thread.shared,
        title=thread.title,
        created_at=thread.created_at,
        updated_at=thread.updated_at,
        parent_thread_id=thread.parent_thread_id,
        parent_agent_id=thread.parent_agent_id,
    )


def _turn(turn: Turn) -> TurnView:
    return TurnView(
        id=turn.id,
        status=turn.status,
        reason=turn.reason,
        code=turn.code,
        tool_calls=turn.tool_calls,
        input_tokens=turn.input_tokens,
        output_tokens=turn.output_tokens,
        started_at=turn.started_at,
        ended_at=turn.ended_at,
    )


@routes.route("threads-v1/list", args=AgentThreads, least_role=Role.MEMBER)
async def list_threads(call: HostCall, args: AgentThreads) -> ThreadList:
    """The agent's threads this member sees: their own and the shared ones, newest first,
    each with its count of turns ended since the member read it."""
    peer = call.peer
    threads = await call.host.threads.list_threads_unread(
        peer.team_id, args.agent_id, peer.account_id
    )
    return ThreadList(
        threads=[ListedThread(**_thread(t).model_dump(), unread=unread) for t, unread in threads]
    )


@routes.route("threads-v1/start", args=StartThread, least_role=Role.MEMBER)
async def start_thread(call: HostCall, args: StartThread) -> ThreadView:
    """Start a thread with an agent; private to its starter unless ``shared``."""
    peer = call.peer
    thread = await call.host.threads.start_thread(
        peer.team_id, args.agent_id, peer.account_id, args.title, shared=args.shared
    )
    return _thread(thread)


@routes.route("threads-v1/get", args=ThreadRef, least_role=Role.MEMBER)
async def get_thread(call: HostCall, args: ThreadRef) -> ThreadContentsView:
    """The thread so far: its transcript, its turns, what a running turn has said and the
    queued messages; the caller has read it (its unread count goes to nought)."""
    peer = call.peer
    contents = await call.host.threads.read(peer.team_id, args.thread_id, peer.account_id)
    return ThreadContentsView(
        thread=_thread(contents.thread),
        messages=[m.model_dump(mode="json", exclude=PROVIDER_ONLY) for m in contents.messages],
        turns=[_turn(t) for t in contents.turns],
        running_turn_id=contents.running_turn_id,
        running_text=contents.running_text,
        running_turn_waiting=contents.running_turn_waiting,
        tasks=[
            TaskItem(id=t.id, subject=t.subject, description=t.description, status=t.status)
            for t in contents.tasks
        ],
        queued=[item(q) for q in contents.queued],
        delegations=[
            DelegationItem(
                thread_id=t.id, agent_id=t.agent_id, title=t.title, created_at=t.created_at
            )
            for t in contents.delegations
        ],
    )


@routes.route("threads-v1/send", args=SendMessage, least_role=Role.MEMBER)
async def send_message(call: HostCall, args: SendMessage) -> TurnStartedView:
    """Send a message: the agent's turn starts and streams as events; while a turn runs,
    the message is queued and starts the next turn."""
    sent = await call.host.threads.send(
        call.member, args.thread_id, args.text, [a.path for a in args.attachments]
    )
    if isinstance(sent, QueuedMessage):
        return TurnStartedView(turn_id=None, queued=item(sent))
    return TurnStartedView(turn_id=sent.id)


@routes.route("threads-v1/attachment_preview", args=PreviewRef, least_role=Role.MEMBER)
async def attachment_preview(call: HostCall, args: PreviewRef) -> AttachmentPreview:
    """An image or SVG attachment's preview, only ever as a ``data:`` URL."""
    attachment, data_url = await call.host.threads.attachment_preview(
        call.member, args.thread_id, args.sha256
    )
    return AttachmentPreview(
        name=attachment.name, mime_type=attachment.mime_type, data_url=data_url
    )


@routes.route("threads-v1/stop", args=ThreadRef, least_role=Role.MEMBER)
async def stop_turn(call: HostCall, args: ThreadRef) -> TurnStopped:
    """Stop the thread's running turn (it ends ``stopped``)."""
    peer = call.peer
    stopped = await call.host.threads.stop(peer.team_id, args.thread_id, peer.account_id)
    return TurnStopped(stopped=stopped)


@routes.route("threads-v1/share", args=ShareThread, least_role=Role.MEMBER)
async def share_thread(call: HostCall, args: ShareThread) -> ThreadView:
    """Share a thread with the team, or make it private again (its starter only)."""
    peer = call.peer
    thread = await call.host.threads.share(
        peer.team_id, args.thread_id, peer.account_id, args.shared
    )
    return _thread(thread)


@routes.route("threads-v1/rename", args=RenameThread, least_role=Role.MEMBER)
async def rename_thread(call: HostCall, args: RenameThread) -> ThreadView:
    """Give a thread a new title (its starter only)."""
    peer = call.peer
    thread = await call.host.threads.rename(
        peer.team_id, args.thread_id, peer.account_id, args.title
    )
    return _thread(thread)


@routes.route("threads-v1/mark-read", args=ThreadRef, least_role=Role.MEMBER)
async def mark_read(call: HostCall, args: ThreadRef) -> Done:
    """The caller has read the thread up to now: its unread count goes to nought."""
    peer = call.peer
    await call.host.threads.mark_read(peer.team_id, args.thread_id, peer.account_id)
    return Done(ok=True)


@routes.route("threads-v1/queue-edit", args=EditQueued, least_role=Role.MEMBER)
async def edit_queued(call: HostCall, args: EditQueued) -> QueuedView:
    """Change the text of one's queued message, until a turn takes it."""
    peer = call.peer
    queued = await call.host.threads.edit_queued(
        peer.team_id, args.thread_id, peer.account_id, args.id, text=args.text
    )
    return QueuedView(queued=item(queued))


@routes.route("threads-v1/queue-steer", args=SteerQueued, least_role=Role.MEMBER)
async def steer_queued(call: HostCall, args: SteerQueued) -> QueuedView:
    """Mark one's queued message to reach the model at the running turn's next request
    (``steer: false`` takes the mark back)."""
    peer = call.peer
    queued = await call.host.threads.edit_queued(
        peer.team_id, args.thread_id, peer.account_id, args.id, steer=args.steer
    )
    return QueuedView(queued=item(queued))


@routes.route("threads-v1/queue-cancel", args=QueuedRef, least_role=Role.MEMBER)
async def cancel_queued(call: HostCall, args: QueuedRef) -> Done:
    """Take one's queued message back, until a turn takes it."""
    peer = call.peer
    await call.host.threads.cancel_queued(peer.team_id, args.thread_id, peer.account_id, args.id)
    return Done(ok=True)
