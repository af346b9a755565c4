"""``workspace-v1``: members browse, download and upload workspace files.

``agentId`` names an agent's own workspace; left out, the team's shared one. A member
sees an agent's workspace when they see one of its threads; admins and owners see all.
File bytes travel as base64 in chunks of at most 128 KiB.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from pydantic import BeforeValidator, Field, StringConstraints, WithJsonSchema

from server.common.protocol.ids import AgentId, UploadId
from server.common.protocol.team_api import MAX_TEAM_API_MESSAGE
from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel
from server.host.container import HostCall
from server.host.rtc.team_api import HostRouteTable
from server.host.services.workspace import MAX_CHUNK_BYTES
from server.host.workspace.folders import Entry
from server.host.workspace.paths import MAX_PART_BYTES, MAX_PATH_CHARS

routes = HostRouteTable("workspace-v1")

Path = Annotated[str, StringConstraints(max_length=MAX_PATH_CHARS)]


_CHUNK_CHARS = 4 * (MAX_CHUNK_BYTES // 3 + 1)

# The most one listed entry can take as JSON: each byte of the longest name a file system
# allows escaped as ``\u00XX`` (six bytes), and room for its kind, size and time.
_ENTRY_BYTES = 6 * MAX_PART_BYTES + 128
# The answer around the entries: its id, the path echoed (at most four bytes a character).
_LISTING_FRAME_BYTES = 4 * MAX_PATH_CHARS + 1024
# So that a page of the longest names still fits in one team-api message.
MAX_LIST_PAGE = (MAX_TEAM_API_MESSAGE - _LISTING_FRAME_BYTES) // _ENTRY_BYTES


def _decode(value: object) -> bytes:
    if not isinstance(value, str) or len(value) > _CHUNK_CHARS:
        raise ValueError(f"base64 of at most {MAX_CHUNK_BYTES} bytes expected")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise ValueError("not valid base64") from None


Chunk = Annotated[
    bytes,
    BeforeValidator(_decode),
    WithJsonSchema({"type": "string", "contentEncoding": "base64", "maxLength": _CHUNK_CHARS}),
]


class WorkspaceArgs(InboundModel):
    agent_id: AgentId | None = Field(None, description="The agent's workspace; none: shared.")


class ListArgs(WorkspaceArgs):
    """A page of a folder's entries: ``limit`` (as many as always fit, by default) from
    ``offset``."""

    path: Path = ""
    offset: WireInt = 0
    limit: Annotated[WireInt, Field(ge=1, le=MAX_LIST_PAGE)] = MAX_LIST_PAGE


class PathArgs(WorkspaceArgs):
    path: Path


class DownloadArgs(PathArgs):
    offset: WireInt = 0
    length: Annotated[WireInt, Field(ge=1, le=MAX_CHUNK_BYTES)] = MAX_CHUNK_BYTES


class StartUpload(PathArgs):
    size: WireInt


class UploadChunk(InboundModel):
    upload_id: UploadId
    offset: WireInt
    data: Chunk


class UploadRef(InboundModel):
    upload_id: UploadId


class EntryView(WireModel):
    name: str
    kind: str = Field(description="'file' or 'folder'")
    size: int
    modified_at: float


class Listing(WireModel):
    path: str
    entries: list[EntryView]
    total: int = Field(description="How many entries the folder holds, on every page.")


class Download(WireModel):
    data: str = Field(description="base64 of the bytes from offset")
    offset: int
    size: int = Field(description="the whole file's size")
    eof: bool


class UploadStarted(WireModel):
    upload_id: str
    chunk_bytes: int
    expires_at: float


class UploadProgress(WireModel):
    received: int


class FileWritten(WireModel):
    path: str
    size: int
    created: bool


class Deleted(WireModel):
    deleted: bool
    kind: str


class Cancelled(WireModel):
    cancelled: bool


def _entry(entry: Entry) -> EntryView:
    return EntryView(
        name=entry.name, kind=entry.kind, size=entry.size, modified_at=entry.modified_at
    )


@routes.route("workspace-v1/list", args=ListArgs, least_role=Role.MEMBER)
async def list_folder(call: HostCall, args: ListArgs) -> Listing:
    """A page of the files and folders of one folder of a workspace, folders first, by name."""
    entries = await call.host.workspace.browse(call.member, args.agent_id, args.path)
    page = entries[args.offset : args.offset + args.limit]
    return Listing(path=args.path.strip("/"), entries=[_entry(e) for e in page], total=len(entries))


@routes.route("workspace-v1/download", args=DownloadArgs, least_role=Role.MEMBER)
async def download(call: HostCall, args: DownloadArgs) -> Download:
    """One chunk of a file; ask again from ``offset + len`` until ``eof``."""
    data, size = await call.host.workspace.download(
        call.member, args.agent_id, args.path, args.offset, args.length
    )
    return Download(
        data=base64.b64encode(data).decode(),
        offset=args.offset,
        size=size,
        eof=args.offset + len(data) >= size,
    )


@routes.route("workspace-v1/upload_start", args=StartUpload, least_role=Role.MEMBER)
async def upload_start(call: HostCall, args: StartUpload) -> UploadStarted:
    """Begin an upload of ``size`` bytes; refused at once past the largest file."""
    upload = await call.host.workspace.start_upload(
        call.member, args.agent_id, args.path, args.size
    )
    return UploadStarted(
        upload_id=upload.id, chunk_bytes=MAX_CHUNK_BYTES, expires_at=upload.expires_at
    )


@routes.route("workspace-v1/upload_chunk", args=UploadChunk, least_role=Role.MEMBER)
async def upload_chunk(call: HostCall, args: UploadChunk) -> UploadProgress:
    """The next chunk, at the offset of the bytes received so far."""
    received = await call.host.workspace.upload_chunk(
        call.member, args.upload_id, args.offset, args.data
    )
    return UploadProgress(received=received)


@routes.route("workspace-v1/upload_finish", args=UploadRef, least_role=Role.MEMBER)
async def upload_finish(call: HostCall, args: UploadRef) -> FileWritten:
    """The complete upload replaces or creates its file, atomically and under the quotas."""
    written = await call.host.workspace.finish_upload(call.member, args.upload_id)
    return FileWritten(path=written.path, size=written.size, created=written.created)


@routes.route("workspace-v1/upload_cancel", args=UploadRef, least_role=Role.MEMBER)
async def upload_cancel(call: HostCall, args: UploadRef) -> Cancelled:
    await call.host.workspace.cancel_upload(call.member, args.upload_id)
    return Cancelled(cancelled=True)


@routes.route("workspace-v1/delete", args=PathArgs, least_role=Role.MEMBER)
async def delete(call: HostCall, args: PathArgs) -> Deleted:
    """Delete a file, or a folder with all in it."""
    kind = await call.host.workspace.remove(call.member, args.agent_id, args.path)
    return Deleted(deleted=True, kind=kind)
