"""``browser-secret-vault-v1``: an owner or admin answers a request and keeps it in the vault.

``submit`` hands a secret to the waiting entry and saves it as a login for the page's
site; ``add_item`` answers ``request_vault_item`` with a new item. Neither answer holds
a secret.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from server.common.protocol.ids import RequestId
from server.common.roles import Role
from server.common.wire import WireModel
from server.host.container import HostCall
from server.host.routes.secret_handoff import SubmitSecret
from server.host.routes.vault import (
    VaultFieldValues,
    VaultItemWire,
    VaultSummaryView,
    item_view,
    summary_view,
)
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("browser-secret-vault-v1")


class SubmitAndSave(SubmitSecret):
    name: Annotated[str, StringConstraints(max_length=100)] | None = None


class AddRequestedItem(VaultFieldValues):
    id: RequestId


class SavedAndHandedOver(WireModel):
    id: str
    item: VaultItemWire


class RequestedItemAdded(WireModel):
    id: str
    item: VaultSummaryView


@routes.route("browser-secret-vault-v1/submit", args=SubmitAndSave, least_role=Role.ADMIN)
async def submit_and_save(call: HostCall, args: SubmitAndSave) -> SavedAndHandedOver:
    """Give the secret to the waiting entry and save it to the vault as a login."""
    peer = call.peer
    saved = await call.host.secret_handoff.submit_and_save(
        peer.team_id, peer.account_id, args.id, args.values, args.name
    )
    return SavedAndHandedOver(id=args.id, item=item_view(saved))


@routes.route("browser-secret-vault-v1/add_item", args=AddRequestedItem, least_role=Role.ADMIN)
async def add_item(call: HostCall, args: AddRequestedItem) -> RequestedItemAdded:
    """Answer an agent's request for a vault item with the item, of the kind it asked for."""
    peer = call.peer
    added = await call.host.secret_handoff.add_requested_item(
        peer.team_id, peer.account_id, args.id, args.given(leave=frozenset({"id"}))
    )
    return RequestedItemAdded(id=args.id, item=summary_view(added))
