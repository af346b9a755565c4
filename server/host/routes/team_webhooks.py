"""``team-webhooks-v1``: endpoints told of runs and waiting approvals, and their delivery log.

Owners and admins only. An address is answered masked (its path and query are sealed);
the signing secret is answered once, by ``create``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.ids import TeamWebhookId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.team_webhooks import (
    MAX_LOG,
    MAX_NAME_LENGTH,
    MAX_URL_LENGTH,
    DeliveryView,
    TeamWebhookView,
)
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("team-webhooks-v1")

Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_LENGTH)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=MAX_URL_LENGTH)]
Kind = Annotated[str, StringConstraints(max_length=40)]
Kinds = Annotated[list[Kind], Field(min_length=1, max_length=10)]
BodyFormat = Literal["standard", "slack"]


class WebhookView(WireModel):
    id: str
    name: str
    url: str = Field(description="the address with its path and query masked")
    kinds: list[str] = Field(description="run.finished, run.failed, approval.waiting")
    body_format: str = Field(description="'standard' (Standard Webhooks) or 'slack' ({text})")
    enabled: bool
    created_at: float
    updated_at: float


class WebhookList(WireModel):
    webhooks: list[WebhookView]


class WebhookCreated(WireModel):
    webhook: WebhookView
    secret: str = Field(description="the signing secret (whsec_…), answered this once")


class DeliveryEntry(WireModel):
    id: str = Field(description="the webhook-id header of every attempt")
    kind: str
    status: str = Field(description="'pending', 'delivered' or 'failed'")
    attempts: int
    last_status: int | None = Field(description="the last answer's HTTP status")
    last_error: str | None = Field(description="why the last attempt failed, in words")
    next_attempt_at: float | None
    created_at: float
    updated_at: float


class DeliveryList(WireModel):
    deliveries: list[DeliveryEntry]


class SecretRotated(WireModel):
    secret: str = Field(description="the new signing secret (whsec_…), answered this once")
    previous_valid_until: float | None = Field(
        description="until when the one before it also signs (null: it could not be opened)"
    )


class WebhookDeleted(WireModel):
    deleted: bool


class CreateWebhook(InboundModel):
    name: Name
    url: Url
    kinds: Kinds
    body_format: BodyFormat = "standard"
    enabled: bool = True


class UpdateWebhook(InboundModel):
    id: TeamWebhookId
    name: Name | None = None
    url: Url | None = Field(None, description="a new address; absent keeps the sealed one")
    kinds: Kinds | None = None
    body_format: BodyFormat | None = None
    enabled: bool | None = None


class WebhookRef(InboundModel):
    id: TeamWebhookId


class ListDeliveries(InboundModel):
    id: TeamWebhookId
    limit: int = Field(50, ge=1, le=MAX_LOG)


def _view(view: TeamWebhookView) -> WebhookView:
    return WebhookView(
        id=view.id,
        name=view.name,
        url=view.url,
        kinds=list(view.kinds),
        body_format=view.body_format,
        enabled=view.enabled,
        created_at=view.created_at,
        updated_at=view.updated_at,
    )


def _entry(view: DeliveryView) -> DeliveryEntry:
    return DeliveryEntry(
        id=view.id,
        kind=view.kind,
        status=view.status,
        attempts=view.attempts,
        last_status=view.last_status,
        last_error=view.last_error,
        next_attempt_at=view.next_attempt_at,
        created_at=view.created_at,
        updated_at=view.updated_at,
    )


@routes.route("team-webhooks-v1/list", args=NoArgs, least_role=Role.ADMIN)
async def list_webhooks(call: HostCall, _args: NoArgs) -> WebhookList:
    """The team's webhooks, addresses masked."""
    views = await call.host.team_webhooks.list_webhooks(call.peer.team_id)
    return WebhookList(webhooks=[_view(view) for view in views])


@routes.route("team-webhooks-v1/create", args=CreateWebhook, least_role=Role.ADMIN)
async def create_webhook(call: HostCall, args: CreateWebhook) -> WebhookCreated:
    """Add a webhook; its address must be public (or allowed by the host's setting)."""
    view, secret = await call.host.team_webhooks.create_webhook(
        call.peer.team_id,
        call.peer.account_id,
        name=args.name,
        url=args.url,
        kinds=list(args.kinds),
        body_format=args.body_format,
        enabled=args.enabled,
    )
    return WebhookCreated(webhook=_view(view), secret=secret)


@routes.route("team-webhooks-v1/update", args=UpdateWebhook, least_role=Role.ADMIN)
async def update_webhook(call: HostCall, args: UpdateWebhook) -> WebhookView:
    """Change a webhook's name, address, kinds, body format or whether it is on."""
    view = await call.host.team_webhooks.update_webhook(
        call.peer.team_id,
        args.id,
        name=args.name,
        url=args.url,
        kinds=None if args.kinds is None else list(args.kinds),
        body_format=args.body_format,
        enabled=args.enabled,
    )
    return _view(view)


@routes.route("team-webhooks-v1/rotate_secret", args=WebhookRef, least_role=Role.ADMIN)
async def rotate_secret(call: HostCall, args: WebhookRef) -> SecretRotated:
    """A new signing secret; the one before it also signs for a day."""
    secret, until = await call.host.team_webhooks.rotate_secret(call.peer.team_id, args.id)
    return SecretRotated(secret=secret, previous_valid_until=until)


@routes.route("team-webhooks-v1/delete", args=WebhookRef, least_role=Role.ADMIN)
async def delete_webhook(call: HostCall, args: WebhookRef) -> WebhookDeleted:
    """Remove a webhook and its delivery log."""
    await call.host.team_webhooks.delete_webhook(call.peer.team_id, args.id)
    return WebhookDeleted(deleted=True)


@routes.route("team-webhooks-v1/deliveries", args=ListDeliveries, least_role=Role.ADMIN)
async def list_deliveries(call: HostCall, args: ListDeliveries) -> DeliveryList:
    """A webhook's latest deliveries, newest first."""
    views = await call.host.team_webhooks.list_deliveries(call.peer.team_id, args.id, args.limit)
    return DeliveryList(deliveries=[_entry(view) for view in views])


@routes.route("team-webhooks-v1/test", args=WebhookRef, least_role=Role.ADMIN)
async def send_test(call: HostCall, args: WebhookRef) -> DeliveryEntry:
    """Send a test event now (one attempt) and answer how it went."""
    return _entry(await call.host.team_webhooks.send_test(call.peer.team_id, args.id))
