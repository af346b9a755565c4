"""``agent-memories-v1``: what an agent keeps in memory, for people to see and correct.

Owners and admins reach every memory of every agent. A member reaches their own memories
(made from their private threads) and the team's memories that came only from threads
they can read; memories from browsing steps or of unknown origin are for owners and
admins. Forgetting all of an agent's memories is for owners and admins.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from server.common.protocol.ids import AgentId, MemoryId
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel, no_control_characters
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable
from server.host.services.memories import MAX_MEMORY_CHARS, normalize_site
from server.host.storage.memories import AgentMemory, MemoryQuery

routes = HostRouteTable("agent-memories-v1")

MemoryText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_MEMORY_CHARS),
]
Site = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2048)]
SearchText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=200),
    AfterValidator(no_control_characters),
]
MAX_PAGE = 200


class MemorySourceView(WireModel):
    kind: str = Field(
        description="remember: the agent's own tool in a turn; review: the memory review of "
        "threads (and browsing steps when no thread is named)."
    )
    thread_ids: list[str]
    turn_id: str | None


class MemoryView(WireModel):
    id: str
    agent_id: str
    text: str
    site: str | None
    scope: Literal["team", "member"]
    member_id: str | None = Field(description="The member whose memory it is (scope member).")
    pinned: bool = Field(description="Essential: every turn that may see it carries it.")
    uses: int = Field(description="Turns that carried it and snapshots that showed it.")
    created_at: float
    updated_at: float | None
    updated_by: str | None
    last_active_at: float | None
    source: MemorySourceView


class MemoryPage(WireModel):
    memories: list[MemoryView]
    total: int
    offset: int


class ListMemories(InboundModel):
    agent_id: AgentId
    site: Site | None = Field(default=None, description="Only memories of this site.")
    no_site: bool = Field(default=False, description="Only memories without a site.")
    text: SearchText | None = Field(default=None, description="Only memories containing it.")
    offset: WireInt = 0
    limit: Annotated[WireInt, Field(ge=1, le=MAX_PAGE)] = 50


class MemoryRef(InboundModel):
    agent_id: AgentId
    memory_id: MemoryId


class EditMemory(MemoryRef):
    text: MemoryText
    site: Site | None = Field(description="A host or an address on it; null: no site.")


class PinMemory(MemoryRef):
    pinned: bool


class MemoriesOfAgent(InboundModel):
    agent_id: AgentId


class MemoriesDeleted(WireModel):
    deleted: int


def memory_view(memory: AgentMemory) -> MemoryView:
    return MemoryView(
        id=memory.id,
        agent_id=memory.agent_id,
        text=memory.text,
        site=memory.site,
        scope="team" if memory.member_id is None else "member",
        member_id=memory.member_id,
        pinned=memory.pinned,
        uses=memory.uses,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        updated_by=memory.updated_by,
        last_active_at=memory.active_at,
        source=MemorySourceView(
            kind=memory.source,
            thread_ids=list(memory.source_threads),
            turn_id=memory.source_turn_id,
        ),
    )


@routes.route("agent-memories-v1/list", args=ListMemories, least_role=Role.MEMBER)
async def list_memories(call: HostCall, args: ListMemories) -> MemoryPage:
    """A page of the agent's memories the caller may see: essential first, then newest."""
    query = MemoryQuery(
        site=normalize_site(args.site) if args.site is not None else None,
        no_site=args.no_site,
        text=args.text or None,
        offset=args.offset,
        limit=args.limit,
    )
    found, total = await call.host.memories.find_memories(call.member, args.agent_id, query)
    return MemoryPage(memories=[memory_view(m) for m in found], total=total, offset=args.offset)


@routes.route("agent-memories-v1/get", args=MemoryRef, least_role=Role.MEMBER)
async def get_memory(call: HostCall, args: MemoryRef) -> MemoryView:
    memory = await call.host.memories.get_memory(call.member, args.agent_id, args.memory_id)
    return memory_view(memory)


@routes.route("agent-memories-v1/edit", args=EditMemory, least_role=Role.MEMBER)
async def edit_memory(call: HostCall, args: EditMemory) -> MemoryView:
    """Rewrite a memory's text and site; what looks like a secret is blanked."""
    site = normalize_site(args.site) if args.site is not None else None
    memory = await call.host.memories.edit_memory(
        call.member, args.agent_id, args.memory_id, args.text, site
    )
    return memory_view(memory)


@routes.route("agent-memories-v1/pin", args=PinMemory, least_role=Role.MEMBER)
async def pin_memory(call: HostCall, args: PinMemory) -> MemoryView:
    """Mark a memory essential (always sent) or not."""
    memory = await call.host.memories.pin_memory(
        call.member, args.agent_id, args.memory_id, args.pinned
    )
    return memory_view(memory)


@routes.route("agent-memories-v1/delete", args=MemoryRef, least_role=Role.MEMBER)
async def delete_memory(call: HostCall, args: MemoryRef) -> MemoriesDeleted:
    await call.host.memories.delete_memory(call.member, args.agent_id, args.memory_id)
    return MemoriesDeleted(deleted=1)


@routes.route("agent-memories-v1/delete_all", args=MemoriesOfAgent, least_role=Role.ADMIN)
async def delete_all_memories(call: HostCall, args: MemoriesOfAgent) -> MemoriesDeleted:
    """Forget every memory of the agent."""
    return MemoriesDeleted(
        deleted=await call.host.memories.delete_all_memories(call.member, args.agent_id)
    )
