"""``routines-v1`` webhook triggers: make, list, rotate and delete a routine's hooks.

A hook's secret is in the answer of ``hooks-create`` and ``hooks-rotate`` only; the
sender posts to ``path`` on the hub (the client puts the hub's address before it).
"""

from __future__ import annotations

from pydantic import Field

from server.common.protocol.hooks import HOOK_PATH, HookFilters
from server.common.protocol.ids import HookId, RoutineId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.routine_hooks import HookWithSecret
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable
from server.host.storage.routine_hooks import HookRow

routes = HostRouteTable("routines-v1")


class HookView(WireModel):
    id: str
    routine_id: str
    path: str = Field(description="Where the sender posts, on the hub.")
    filters: HookFilters
    enabled: bool
    created_by: str
    created_at: float
    rotated_at: float | None
    previous_secret_until: float | None = Field(
        description="Until when the secret before the last rotation is still accepted."
    )


class HookList(WireModel):
    hooks: list[HookView]


class HookCreated(WireModel):
    hook: HookView
    secret: str = Field(description="The signing secret: shown this once.")


class HookDeleted(WireModel):
    deleted: bool


class CreateHook(InboundModel):
    routine_id: RoutineId
    filters: HookFilters = Field(default_factory=HookFilters)
    enabled: bool = True


class RoutineRef(InboundModel):
    routine_id: RoutineId


class HookRef(InboundModel):
    hook_id: HookId


def _view(hook: HookRow) -> HookView:
    return HookView(
        id=hook.id,
        routine_id=hook.routine_id,
        path=HOOK_PATH.format(hook_id=hook.id),
        filters=HookFilters.model_validate(hook.filters),
        enabled=hook.enabled,
        created_by=hook.created_by,
        created_at=hook.created_at,
        rotated_at=hook.rotated_at,
        previous_secret_until=hook.previous_until,
    )


def _created(made: HookWithSecret) -> HookCreated:
    return HookCreated(hook=_view(made.hook), secret=made.secret)


@routes.route("routines-v1/hooks-create", args=CreateHook, least_role=Role.MEMBER)
async def create_hook(call: HostCall, args: CreateHook) -> HookCreated:
    """A new webhook trigger for a routine, with its secret (shown this once)."""
    made = await call.host.routine_hooks.create_hook(
        call.member, args.routine_id, args.filters, enabled=args.enabled
    )
    return _created(made)


@routes.route("routines-v1/hooks-list", args=RoutineRef, least_role=Role.MEMBER)
async def list_hooks(call: HostCall, args: RoutineRef) -> HookList:
    """A routine's webhook triggers, never their secrets."""
    hooks = await call.host.routine_hooks.list_hooks(call.member, args.routine_id)
    return HookList(hooks=[_view(hook) for hook in hooks])


@routes.route("routines-v1/hooks-rotate", args=HookRef, least_role=Role.MEMBER)
async def rotate_hook(call: HostCall, args: HookRef) -> HookCreated:
    """A new secret for a trigger (shown this once); the one before stays valid for a day."""
    return _created(await call.host.routine_hooks.rotate_hook(call.member, args.hook_id))


@routes.route("routines-v1/hooks-delete", args=HookRef, least_role=Role.MEMBER)
async def delete_hook(call: HostCall, args: HookRef) -> HookDeleted:
    """Delete a trigger; the hub answers its sender 404 from then on."""
    await call.host.routine_hooks.delete_hook(call.member, args.hook_id)
    return HookDeleted(deleted=True)
