"""The signals of work that runs without a person in the chat.

Routines publish ``RoutineDue`` when a schedule fires, ``RunFinished`` when a run ends
and ``RoutineDeleted`` when one is gone; the attention registry publishes
``AttentionWaiting`` when a request needs a person; the notification service publishes
``NotificationCreated`` for each member it tells; budgets publish ``BudgetReached``
when one passes 80 %. Notifications, team webhooks, email
and webhook triggers subscribe to them in the container.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RunStatus = Literal[
    "done", "error", "capped", "denied", "stopped", "budget", "skipped", "interrupted"
]
WaitingKind = Literal["consent", "question", "secret", "vaultItem"]


@dataclass(frozen=True)
class RoutineDue:
    """A routine's schedule reached ``due_at`` (host clock, seconds since the epoch)."""

    team_id: str
    agent_id: str
    routine_id: str
    due_at: float


@dataclass(frozen=True)
class RoutineDeleted:
    """A routine is gone (deleted, or with its agent): its webhook triggers go with it."""

    team_id: str
    routine_id: str


@dataclass(frozen=True)
class RunFinished:
    """A routine's run ended. ``audience`` holds the accounts that see its runs."""

    team_id: str
    agent_id: str
    routine_id: str
    routine_name: str
    run_id: str
    thread_id: str | None
    status: RunStatus
    audience: tuple[str, ...]
    # A person's sentence for a run that did not end ``done``.
    reason: str | None = None
    # The whole team sees the routine's runs (``audience`` then names only its creator).
    whole_team: bool = False


@dataclass(frozen=True)
class AttentionWaiting:
    """An agent waits for a person: ``description`` says what, in words (never a
    secret, page contents or raw tool arguments); ``addressed_to`` names who may answer."""

    team_id: str
    agent_id: str
    thread_id: str
    request_id: str
    kind: WaitingKind
    description: str
    addressed_to: tuple[str, ...]
    expires_at: float
    routine_id: str | None = None
    # A shared thread's request may be answered by any member who sees the thread.
    whole_team: bool = False


@dataclass(frozen=True)
class NotificationCreated:
    """A member has a new notification."""

    team_id: str
    account_id: str
    notification_id: str
    kind: str


@dataclass(frozen=True)
class BudgetReached:
    """A budget passed 80 % of its period (once per period): ``accounts`` are the owners
    and admins the host knows and the member concerned; ``title`` and ``body`` say which
    budget and how much is used, in words."""

    team_id: str
    budget_id: str
    agent_id: str
    title: str
    body: str
    accounts: tuple[str, ...]
