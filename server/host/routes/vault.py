"""``vault-v1``: a team's logins, cards and contact details. No answer carries a secret."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.protocol.ids import VaultItemId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable
from server.host.services.vault import MAX_SITES, VaultItemView, VaultKind, VaultSummary

routes = HostRouteTable("vault-v1")

# One answer stays well under the Team API's message size with long notes and many sites.
MAX_PAGE = 200
DEFAULT_PAGE = 50

# Bounds of what is parsed at all; the vault service checks each field's own limit.
Text = Annotated[str, StringConstraints(max_length=4096)]
Sites = Annotated[list[Text], Field(max_length=MAX_SITES)]


class VaultSummaryView(WireModel):
    id: str
    kind: VaultKind
    name: str
    sites: list[str]


class VaultSummaryList(WireModel):
    items: list[VaultSummaryView]
    total: int
    next_offset: int | None = Field(description="Where the next page starts; null at the end.")


class VaultItemWire(WireModel):
    """An item as an owner or admin reads it: secrets only as "set" marks."""

    id: str
    kind: VaultKind
    name: str
    sites: list[str]
    username: str | None
    notes: str | None
    cardholder: str | None
    expiry: str | None
    billing_address: str | None
    card_last4: str | None
    card_brand: str | None
    email: str | None
    phone: str | None
    postal_address: str | None
    password_set: bool
    totp_secret_set: bool
    number_set: bool
    security_code_set: bool
    created_at: float
    updated_at: float


class VaultItemList(WireModel):
    items: list[VaultItemWire]
    total: int
    next_offset: int | None = Field(description="Where the next page starts; null at the end.")


class ListPage(InboundModel):
    """A page of items by name: ``limit`` (50 unless given, at most 200) from ``offset``."""

    offset: WireInt = 0
    limit: Annotated[WireInt, Field(ge=1, le=MAX_PAGE)] = DEFAULT_PAGE


class VaultItemDeleted(WireModel):
    deleted: bool


class ItemRef(InboundModel):
    item_id: VaultItemId


class LoginFields(InboundModel):
    kind: Literal["login"]
    name: Text
    sites: Sites
    username: Text | None = None
    password: Text | None = None
    totp_secret: Text | None = None
    notes: Text | None = None


class CardFields(InboundModel):
    kind: Literal["card"]
    name: Text
    cardholder: Text | None = None
    number: Text | None = None
    expiry: Text | None = None
    security_code: Text | None = None
    billing_address: Text | None = None


class ContactFields(InboundModel):
    kind: Literal["contact"]
    name: Text
    email: Text | None = None
    phone: Text | None = None
    postal_address: Text | None = None


class CreateVaultItem(InboundModel):
    item: Annotated[LoginFields | CardFields | ContactFields, Field(discriminator="kind")]


class VaultFieldValues(InboundModel):
    """Fields of any kind of item; the vault service refuses those not of the item's kind."""

    name: Text | None = None
    sites: Sites | None = None
    username: Text | None = None
    password: Text | None = None
    totp_secret: Text | None = None
    notes: Text | None = None
    cardholder: Text | None = None
    number: Text | None = None
    expiry: Text | None = None
    security_code: Text | None = None
    billing_address: Text | None = None
    email: Text | None = None
    phone: Text | None = None
    postal_address: Text | None = None

    def given(self, *, leave: frozenset[str] = frozenset()) -> dict[str, object]:
        """The fields the client sent, by their Python names."""
        return {name: getattr(self, name) for name in self.model_fields_set - leave}


class UpdateVaultItem(VaultFieldValues):
    """Only the fields given change; a secret sent as the mask keeps its value, null clears."""

    item_id: VaultItemId


def summary_view(item: VaultSummary) -> VaultSummaryView:
    return VaultSummaryView(id=item.id, kind=item.kind, name=item.name, sites=list(item.sites))


def item_view(item: VaultItemView) -> VaultItemWire:
    return VaultItemWire(
        id=item.id,
        kind=item.kind,
        name=item.name,
        sites=list(item.sites),
        username=item.username,
        notes=item.notes,
        cardholder=item.cardholder,
        expiry=item.expiry,
        billing_address=item.billing_address,
        card_last4=item.card_last4,
        card_brand=item.card_brand,
        email=item.email,
        phone=item.phone,
        postal_address=item.postal_address,
        password_set="password" in item.secrets_set,
        totp_secret_set="totp_secret" in item.secrets_set,
        number_set="number" in item.secrets_set,
        security_code_set="security_code" in item.secrets_set,
        created_at=item.created_at,
        updated_at=item.updated_at,
    )


def _next(page: ListPage, shown: int, total: int) -> int | None:
    end = page.offset + shown
    return end if shown and end < total else None


@routes.route("vault-v1/list_names", args=ListPage, least_role=Role.MEMBER)
async def list_names(call: HostCall, args: ListPage) -> VaultSummaryList:
    """The team's items by name and kind, so a member recognises what an agent asks for."""
    listed = await call.host.vault.list_summaries(
        call.peer.team_id, offset=args.offset, limit=args.limit
    )
    return VaultSummaryList(
        items=[summary_view(item) for item in listed.items],
        total=listed.total,
        next_offset=_next(args, len(listed.items), listed.total),
    )


@routes.route("vault-v1/list", args=ListPage, least_role=Role.ADMIN)
async def list_items(call: HostCall, args: ListPage) -> VaultItemList:
    """Items' fields without their secrets, a page at a time."""
    listed = await call.host.vault.list_items(
        call.peer.team_id, offset=args.offset, limit=args.limit
    )
    return VaultItemList(
        items=[item_view(item) for item in listed.items],
        total=listed.total,
        next_offset=_next(args, len(listed.items), listed.total),
    )


@routes.route("vault-v1/read", args=ItemRef, least_role=Role.ADMIN)
async def read_item(call: HostCall, args: ItemRef) -> VaultItemWire:
    """One item's fields without its secrets."""
    return item_view(await call.host.vault.read_item(call.peer.team_id, args.item_id))


@routes.route("vault-v1/create", args=CreateVaultItem, least_role=Role.ADMIN)
async def create_item(call: HostCall, args: CreateVaultItem) -> VaultItemWire:
    """Add a login, a card or a contact; its secrets are sealed before they are stored."""
    values = args.item.model_dump(by_alias=False, exclude={"kind"}, exclude_unset=True)
    created = await call.host.vault.create_item(call.peer.team_id, args.item.kind, values)
    return item_view(created)


@routes.route("vault-v1/update", args=UpdateVaultItem, least_role=Role.ADMIN)
async def update_item(call: HostCall, args: UpdateVaultItem) -> VaultItemWire:
    """Change the fields given of one item."""
    values = args.given(leave=frozenset({"item_id"}))
    return item_view(await call.host.vault.update_item(call.peer.team_id, args.item_id, values))


@routes.route("vault-v1/delete", args=ItemRef, least_role=Role.ADMIN)
async def delete_item(call: HostCall, args: ItemRef) -> VaultItemDeleted:
    """Delete an item and its secrets."""
    await call.host.vault.delete_item(call.peer.team_id, args.item_id)
    return VaultItemDeleted(deleted=True)
