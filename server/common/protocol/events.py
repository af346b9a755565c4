"""The events a host pushes on the ``team-api`` channel: one model each, with its name.

An event goes out as ``{"event": <NAME>, "data": <the model>}``. Every event is
listed in ``HOST_EVENTS``, so it appears in the host-protocol document and the
web client's generated types (``HostEventMessage``, a union keyed by ``event``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, create_model

from server.common.protocol.team_api import TeamApiEvent
from server.common.wire import WireModel

TurnStatus = Literal[
    "done", "denied", "capped", "incomplete", "stopped", "error", "interrupted", "budget"
]
"""How a turn ended; ``incomplete``: the model's reply was cut at its token limit;
``interrupted``: the host stopped (or crashed) while it ran."""


class HostEvent(WireModel):
    """Base of every event; ``NAME`` is what the ``event`` field carries."""

    NAME: ClassVar[str]

    def message(self) -> TeamApiEvent:
        return TeamApiEvent(event=self.NAME, data=self.model_dump(mode="json"))


class VaultChanged(HostEvent):
    """The team's vault changed (an item added, changed or deleted); ``vault-v1/list_names``
    has the new state, never a secret."""

    NAME: ClassVar[str] = "vault-changed"


class AgentMemoriesChanged(HostEvent):
    """An agent's memories changed (one kept, rewritten, pinned or deleted);
    ``agent-memories-v1/list`` has them."""

    NAME: ClassVar[str] = "agent-memories-changed"
    agent_id: str


class BrowserTabsChanged(HostEvent):
    """The team's tab list changed (a tab opened, closed, moved, had a new title, was taken
    or released); ``browser-control-v1/list_tabs`` has the new list."""

    NAME: ClassVar[str] = "browser-tabs-changed"


class BrowserProfilesChanged(HostEvent):
    """The team's browser profiles, or an agent's choice of one, changed."""

    NAME: ClassVar[str] = "browser-profiles-changed"


class ProvidersChanged(HostEvent):
    """The team's model providers changed (a key set or cleared, a provider added,
    changed or deleted); ``providers-v1/list`` has the new state, never a key."""

    NAME: ClassVar[str] = "providers-changed"


class AgentsChanged(HostEvent):
    """The team's agents changed (one was created, updated, duplicated or deleted)."""

    NAME: ClassVar[str] = "agents-changed"


class BrowserTakeoverRequested(HostEvent):
    """An agent asks a person to take a tab over (a captcha, a sign-in), or the host does
    for a case only a person settles (``code`` names it)."""

    NAME: ClassVar[str] = "browser-takeover-requested"
    tab_id: str
    agent_id: str | None
    thread_id: str | None
    reason: str
    code: str | None = Field(
        default=None,
        description="Set when the host found the case: crossOriginFrame, passkey, "
        "accountChoice, paymentConfirmation, captcha, entryFailed or pageNotAnswering; None "
        "for an agent's own request.",
    )


class BrowserControlRequested(HostEvent):
    """A member asks the holder of a tab for control; sent to the holder only.

    ``expires_in`` is the seconds it waits for an answer, for a client whose clock is not
    the host's; ``expires_at`` is the same moment on the host's clock.
    """

    NAME: ClassVar[str] = "browser-control-requested"
    id: str
    tab_id: str
    account_id: str = Field(description="The member who asks.")
    expires_at: float
    expires_in: float


class BrowserControlRequestResolved(HostEvent):
    """A request for control is no longer waiting; sent to the holder and the asker.

    ``granted`` (control passed to the asker), ``dismissed`` by the holder, ``withdrawn``
    by the asker, ``expired`` unanswered, or ``cancelled`` (the holder let go of the tab, or
    it closed).
    """

    NAME: ClassVar[str] = "browser-control-request-resolved"
    id: str
    tab_id: str
    account_id: str = Field(description="The member who asked.")
    outcome: Literal["granted", "dismissed", "withdrawn", "expired", "cancelled"]


RevocationCode = Literal[
    "sessionEnded", "roleChanged", "removedFromTeam", "hostRemoved", "accessChanged"
]
"""Why access ended, as a stable code declared in ``server.common.error_codes``."""


class Revoked(HostEvent):
    """This connection ends now: access changed (sent just before the host closes it).

    ``code`` says why for a client to put in words; ``reason`` is the hub's wording, for logs.
    """

    NAME: ClassVar[str] = "revoked"
    code: RevocationCode
    reason: str


class ThreadsChanged(HostEvent):
    """A thread of an agent was started or changed (shared, renamed)."""

    NAME: ClassVar[str] = "threads-changed"
    agent_id: str
    thread_id: str


class StartingMessage(WireModel):
    """The message a turn starts with, as those who see the thread are shown it."""

    account_id: str | None = Field(
        description="Who wrote it; null: no person (a routine's message, an agent's question)."
    )
    text: str
    attachments: list[str] = Field(description="The names of the files it carries.")


class TurnStarted(HostEvent):
    """A member's message started a turn of the thread."""

    NAME: ClassVar[str] = "turn-started"
    thread_id: str
    turn_id: str
    user_message: StartingMessage | None = Field(
        default=None,
        description=(
            "The message it starts with; null when it was a queued one "
            "(`queued-message-taken` showed it)."
        ),
    )


class TurnWaiting(HostEvent):
    """The team runs as many turns at once as the host allows (``host.team_running_turns``):
    this turn waits for one of them to end; ``ahead`` of the team's turns wait before it.
    ``turn-running`` follows when it runs (or ``turn-finished``, stopped while it waited)."""

    NAME: ClassVar[str] = "turn-waiting"
    thread_id: str
    turn_id: str
    ahead: int


class TurnRunning(HostEvent):
    """A turn that waited for one of the team's places runs now."""

    NAME: ClassVar[str] = "turn-running"
    thread_id: str
    turn_id: str


class TextDelta(HostEvent):
    """More of the agent's reply; deltas of a turn are batched about every 30 ms."""

    NAME: ClassVar[str] = "turn-text"
    thread_id: str
    turn_id: str
    text: str


class TextReset(HostEvent):
    """The reply being streamed broke off and the model is asked for it again: drop the
    turn's text since its last tool call (what this reply said so far); the new reply's text
    follows as ``turn-text``. ``reason`` says why the reply broke off."""

    NAME: ClassVar[str] = "turn-text-reset"
    thread_id: str
    turn_id: str
    reason: str


class ToolCallStarted(HostEvent):
    """The agent runs a tool: its name, a short summary of its arguments and the tab; for a
    gated tool, ``description`` says for a person what the call does and on which page."""

    NAME: ClassVar[str] = "tool-call-started"
    thread_id: str
    turn_id: str
    call_id: str
    tool: str
    summary: str
    tab_id: str | None
    description: str | None = None


class ToolCallFinished(HostEvent):
    """A tool call ended: ``ok``, ``refused`` (with the reason) or ``error``; for a gated
    tool with its ``description``, and the tab it worked in or opened (``tabId``, with the
    tab's title as it ended) where a tab is involved."""

    NAME: ClassVar[str] = "tool-call-finished"
    thread_id: str
    turn_id: str
    call_id: str
    tool: str
    outcome: Literal["ok", "refused", "error"]
    summary: str
    description: str | None = None
    tab_id: str | None = None
    tab_title: str | None = None


class TurnFinished(HostEvent):
    """A turn ended: done, denied, capped, incomplete (the model's reply was cut at its token
    limit), stopped or error, with the reason."""

    NAME: ClassVar[str] = "turn-finished"
    thread_id: str
    turn_id: str
    status: TurnStatus
    reason: str | None
    code: str | None = Field(
        None,
        description="An error's stable code when a person can act on it: providerKeyMissing, "
        "providerKeyRefused, providerKeyUnusable, providerNoModel (see the error codes)",
    )
    tool_calls: int
    input_tokens: int
    output_tokens: int


class SecretFieldLabel(WireModel):
    """One field a secret goes into, as the page names it; never its value."""

    label: str
    kind: Literal["password", "username", "oneTimeCode", "cardNumber", "securityCode", "other"]


class SecretRequestDetails(WireModel):
    """What a person sees of a request for a secret: only public facts of the page."""

    tab_id: str
    origin: str
    fields: list[SecretFieldLabel]
    purpose: str
    # Whether "save to vault" may be offered: a login's password, to an owner or admin.
    vault_offered: bool


class VaultItemRequestDetails(WireModel):
    """What a person sees of a request to add a vault item: the agent's non-secret values."""

    kind: Literal["login", "card", "contact"]
    prefill: dict[str, str | list[str]]
    reason: str


class AttentionRequested(HostEvent):
    """An agent waits for a person: consent for a gated call, an answer to its question
    (``ask_user``: the question, and the options to choose from when it gives some), a secret
    for a page (``secret``; answered on ``browser-secret-handoff-v1``) or a new vault item
    (``vaultItem``; answered on ``browser-secret-vault-v1`` by an owner or admin)."""

    NAME: ClassVar[str] = "attention-requested"
    id: str
    kind: Literal["consent", "question", "secret", "vaultItem"]
    thread_id: str
    agent_id: str
    call_id: str
    tool: str
    summary: str
    expires_at: float
    question: str | None = None
    options: list[str] | None = None
    multiple: bool = False
    secret: SecretRequestDetails | None = None
    vault_item: VaultItemRequestDetails | None = None
    # For consent: what the call will do, in one line from the host (``Click “Empty basket”
    # on Shop (shop.test)``); ``summary`` keeps the raw call for its details.
    description: str | None = None


class AttentionResolved(HostEvent):
    """A request is no longer waiting: answered, expired or cancelled."""

    NAME: ClassVar[str] = "attention-resolved"
    id: str
    thread_id: str
    outcome: str


class TaskItem(WireModel):
    """One task of a thread's task list."""

    id: str
    subject: str
    description: str | None
    status: Literal["pending", "in_progress", "completed"]


class TasksChanged(HostEvent):
    """The agent's task list in a thread changed; ``tasks`` is the whole new list."""

    NAME: ClassVar[str] = "tasks-changed"
    thread_id: str
    tasks: list[TaskItem]


class SubAgentEvent(HostEvent):
    """What a sub-agent of a turn does, told in its parent's thread: it started, said
    something, ran a tool, or ended (with ``status`` and its ``summary``)."""

    NAME: ClassVar[str] = "sub-agent"
    thread_id: str
    turn_id: str
    sub_agent_id: str
    description: str
    type: Literal["researcher", "page_operator", "general"]
    phase: Literal["started", "text", "tool-started", "tool-finished", "finished"]
    text: str | None = None
    tool: str | None = None
    outcome: Literal["ok", "refused", "error"] | None = None
    status: TurnStatus | None = None


class DelegationStarted(HostEvent):
    """An agent's ``ask_agent`` call (``call_id``) of the thread's turn handed a task to the
    agent ``agent_id``, which works on it in the new thread ``child_thread_id``."""

    NAME: ClassVar[str] = "delegation-started"
    thread_id: str
    turn_id: str
    call_id: str | None
    child_thread_id: str
    agent_id: str


RoutineRunStatus = Literal[
    "done", "error", "capped", "denied", "stopped", "budget", "skipped", "interrupted"
]
"""How a routine's run ended."""


class RoutineRunStarted(HostEvent):
    """A routine's run started a turn (``thread_id``): on its schedule, by hand or by a
    webhook delivery. Sent to the members who see the routine's runs."""

    NAME: ClassVar[str] = "routine-run-started"
    agent_id: str
    routine_id: str
    run_id: str
    trigger: Literal["schedule", "manual", "webhook"]
    thread_id: str | None


class RoutineRunFinished(HostEvent):
    """A routine's run ended, with its status and the reason for one that is not done."""

    NAME: ClassVar[str] = "routine-run-finished"
    agent_id: str
    routine_id: str
    run_id: str
    status: RoutineRunStatus
    reason: str | None
    thread_id: str | None


NotificationKind = Literal["approval", "question", "runFinished", "runFailed", "budget"]
"""What a notification is about: an approval (or a secret, or a vault item) waiting for the
member, an agent's question to them, a routine's run they see that finished or failed, a
budget that passed 80 %."""


class NotificationAdded(HostEvent):
    """The member has a new notification; sent to that member only. ``unread`` is how many
    of theirs are unread now (the bell's count)."""

    NAME: ClassVar[str] = "notification-created"
    id: str
    kind: NotificationKind
    title: str
    body: str
    agent_id: str
    thread_id: str | None
    request_id: str | None
    created_at: float
    unread: int


class NotificationsRead(HostEvent):
    """Some of the member's notifications were marked read (in another window, say); sent
    to that member only, with how many stay unread."""

    NAME: ClassVar[str] = "notifications-read"
    unread: int


class QueuedMessageItem(WireModel):
    """A member's message waiting behind the thread's running turn."""

    id: str
    thread_id: str
    account_id: str = Field(description="Who sent it: only they may edit, steer or cancel it.")
    text: str
    attachments: list[str] = Field(description="The names of the files it carries.")
    steer: bool = Field(description="Given to the model at the running turn's next request.")
    created_at: float
    updated_at: float


class QueuedMessageAdded(HostEvent):
    """A message was sent while a turn ran: it waits in the thread's queue."""

    NAME: ClassVar[str] = "queued-message-added"
    thread_id: str
    queued: QueuedMessageItem


class QueuedMessageUpdated(HostEvent):
    """A queued message was edited, or marked to steer the running turn (or not)."""

    NAME: ClassVar[str] = "queued-message-updated"
    thread_id: str
    queued: QueuedMessageItem


class QueuedMessageTaken(HostEvent):
    """A queued message left the queue into turn ``turn_id``: it started that turn, or
    (``steered``) it joined the running turn at its next model request."""

    NAME: ClassVar[str] = "queued-message-taken"
    thread_id: str
    id: str
    turn_id: str
    steered: bool


class QueuedMessageCancelled(HostEvent):
    """Its sender took a queued message back before a turn took it."""

    NAME: ClassVar[str] = "queued-message-cancelled"
    thread_id: str
    id: str


class McpServersChanged(HostEvent):
    """The team's MCP servers changed (one added, changed or deleted, an agent given or
    denied one, or an agent deleted); ``mcp-servers-v1/list`` has the new state, never a
    secret."""

    NAME: ClassVar[str] = "mcp-servers-changed"


class McpServerStatusChanged(HostEvent):
    """An MCP server's session changed status: ``idle`` (not running; it starts when an
    agent needs it), ``starting``, ``connected``, ``error`` (``reason`` says why in words)
    or ``signIn`` (it needs a sign-in)."""

    NAME: ClassVar[str] = "mcp-server-status"
    server_id: str
    status: Literal["idle", "starting", "connected", "error", "signIn"]
    reason: str | None = None
    tools: int = Field(0, description="how many of its tools agents are offered")
    problems: list[str] = Field(
        default_factory=list, description="tools not offered, each with the reason"
    )
    code: str | None = Field(
        None,
        description="the stable name of why, where it has one (mcpSignInIssuerMismatch, "
        "mcpSignInServerChanged)",
    )


class SkillsChanged(HostEvent):
    """A skill of the team changed: ``change`` is ``created``, ``edited``, ``uploaded``,
    ``reverted``, ``proposed`` (an agent proposed a draft for people to review),
    ``saved`` (a draft was saved), ``discarded``, ``deleted``, ``enabled`` or ``disabled``
    (for the agent ``agentId``); ``skills-v1/list`` has the new state."""

    NAME: ClassVar[str] = "skills-changed"
    name: str
    change: str
    state: str = Field(description="draft or saved; empty once the skill is gone")
    version: int = 0
    agent_id: str | None = None


HOST_EVENTS: tuple[type[HostEvent], ...] = (
    AgentsChanged,
    ThreadsChanged,
    TurnStarted,
    TurnWaiting,
    TurnRunning,
    TextDelta,
    TextReset,
    ToolCallStarted,
    ToolCallFinished,
    TurnFinished,
    QueuedMessageAdded,
    QueuedMessageUpdated,
    QueuedMessageTaken,
    QueuedMessageCancelled,
    AttentionRequested,
    AttentionResolved,
    TasksChanged,
    SubAgentEvent,
    DelegationStarted,
    BrowserTabsChanged,
    BrowserProfilesChanged,
    ProvidersChanged,
    VaultChanged,
    AgentMemoriesChanged,
    BrowserTakeoverRequested,
    BrowserControlRequested,
    BrowserControlRequestResolved,
    RoutineRunStarted,
    RoutineRunFinished,
    Revoked,
    NotificationAdded,
    NotificationsRead,
    McpServersChanged,
    McpServerStatusChanged,
    SkillsChanged,
)


def event_envelope(event: type[HostEvent]) -> type[WireModel]:
    """The message model of one event, ``{event: <its NAME>, data: <it>}``, for schemas."""
    fields: dict[str, Any] = {
        "event": (Literal[event.NAME], Field()),
        "data": (event, Field()),
    }
    return create_model(f"{event.__name__}Event", __base__=WireModel, **fields)
