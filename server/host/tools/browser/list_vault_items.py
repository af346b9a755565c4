"""The ``list_vault_items`` tool: which vault items exist, never what they hold."""

from __future__ import annotations

from typing import Any

from server.host.tools.args import ToolArgs
from server.host.tools.base import Tool
from server.host.tools.context import ToolContext
from server.host.tools.page.secure_entry import desk_of


class ListVaultItemsArgs(ToolArgs):
    """No input."""


async def list_vault_items(context: ToolContext, _args: ListVaultItemsArgs) -> dict[str, Any]:
    listed = await desk_of(context).vault.list_summaries(context.team_id)
    return {
        "items": [
            {"id": item.id, "kind": item.kind, "name": item.name, "sites": list(item.sites)}
            for item in listed.items
        ],
        "next": "fill_from_vault fills a login or card by its id; request_vault_item asks a "
        "person to add one that is missing.",
    }


TOOL = Tool(
    name="list_vault_items",
    description=(
        "List the team's vault items (logins, cards, contacts): ids, names, kinds and sites, "
        "never their values."
    ),
    args=ListVaultItemsArgs,
    gated=False,
    run=list_vault_items,
)
