"""``notifications-v1``: what a member is told (approvals and questions waiting for them,
routines' runs they see that ended), marking it read, and their email choices.

Every member reaches their own notifications and choices only; a notification carries
words and ids, never a secret, page contents or tool arguments.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from server.common.protocol.events import NotificationKind
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel
from server.host.agents.email_notices import MAX_ADDRESS
from server.host.agents.notifications import MAX_PAGE, EmailPreferences
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.notifications import Notification

routes = HostRouteTable("notifications-v1")

EmailChoice = Literal["off", "immediately", "digest"]
NotificationRef = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[0-9a-f]{32}$")]


class NotificationView(WireModel):
    id: str
    kind: NotificationKind
    title: str
    body: str
    agent_id: str
    thread_id: str | None = Field(description="The thread to open at the card, if any.")
    request_id: str | None = Field(description="The approval or question it is about.")
    routine_id: str | None
    run_id: str | None
    created_at: float
    read_at: float | None


class NotificationList(WireModel):
    notifications: list[NotificationView]
    unread: int = Field(description="How many of the member's notifications are unread.")


class ListNotifications(InboundModel):
    unread_only: bool = Field(default=False, description="Only unread ones.")
    before: float | None = Field(default=None, description="Only those made before this time.")
    before_id: NotificationRef | None = Field(
        default=None,
        description=(
            "With `before`: the last one of the page before (its `createdAt` is `before`), "
            "so those made at that same time and listed after it come next."
        ),
    )
    limit: Annotated[WireInt, Field(ge=1, le=MAX_PAGE)] = 50


class MarkRead(InboundModel):
    id: NotificationRef


class Unread(WireModel):
    unread: int


class MarkedRead(WireModel):
    marked: int


class PreferencesView(WireModel):
    email: str | None = Field(description="Where email notices go; null: no email.")
    approval: EmailChoice
    question: EmailChoice
    run_finished: EmailChoice
    run_failed: EmailChoice


class SetPreferences(InboundModel):
    email: Annotated[str, Field(max_length=MAX_ADDRESS)] | None
    approval: EmailChoice
    question: EmailChoice
    run_finished: EmailChoice
    run_failed: EmailChoice


def notification_view(n: Notification) -> NotificationView:
    return NotificationView(
        id=n.id,
        kind=n.kind,  # type: ignore[arg-type]
        title=n.title,
        body=n.body,
        agent_id=n.agent_id,
        thread_id=n.thread_id,
        request_id=n.request_id,
        routine_id=n.routine_id,
        run_id=n.run_id,
        created_at=n.created_at,
        read_at=n.read_at,
    )


def _preferences_view(p: EmailPreferences) -> PreferencesView:
    return PreferencesView(
        email=p.email,
        approval=p.approval,  # type: ignore[arg-type]
        question=p.question,  # type: ignore[arg-type]
        run_finished=p.run_finished,  # type: ignore[arg-type]
        run_failed=p.run_failed,  # type: ignore[arg-type]
    )


@routes.route("notifications-v1/list", args=ListNotifications, least_role=Role.MEMBER)
async def list_notifications(call: HostCall, args: ListNotifications) -> NotificationList:
    """The caller's notifications, newest first, and how many are unread."""
    page = await call.host.notifications.list_notifications(
        call.member,
        unread_only=args.unread_only,
        limit=args.limit,
        before=args.before,
        before_id=args.before_id,
    )
    return NotificationList(
        notifications=[notification_view(n) for n in page.notifications], unread=page.unread
    )


@routes.route("notifications-v1/mark_read", args=MarkRead, least_role=Role.MEMBER)
async def mark_read(call: HostCall, args: MarkRead) -> Unread:
    """Mark one of the caller's notifications read."""
    return Unread(unread=await call.host.notifications.mark_read(call.member, args.id))


@routes.route("notifications-v1/mark_all_read", args=NoArgs, least_role=Role.MEMBER)
async def mark_all_read(call: HostCall, _args: NoArgs) -> MarkedRead:
    """Mark every notification of the caller read."""
    return MarkedRead(marked=await call.host.notifications.mark_all_read(call.member))


@routes.route("notifications-v1/get_preferences", args=NoArgs, least_role=Role.MEMBER)
async def get_preferences(call: HostCall, _args: NoArgs) -> PreferencesView:
    """The caller's email choices per kind: off, immediately or an hourly digest."""
    return _preferences_view(await call.host.notifications.get_preferences(call.member))


@routes.route("notifications-v1/set_preferences", args=SetPreferences, least_role=Role.MEMBER)
async def set_preferences(call: HostCall, args: SetPreferences) -> PreferencesView:
    """Set where the caller's email notices go and, per kind, when."""
    chosen = EmailPreferences(
        args.email, args.approval, args.question, args.run_finished, args.run_failed
    )
    return _preferences_view(await call.host.notifications.set_preferences(call.member, chosen))
