"""workspace-v1 over real peers: chunked upload, browse and download of the shared
workspace; an agent's workspace only for a member who sees one of its threads (or an
admin); the size cap, chunk order and unfinished uploads refused; no other team's files."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
from pathlib import Path
from typing import Any

from peer.connection import HostConnection
from server.common.protocol.codec import encode, utf8_size
from server.common.protocol.team_api import MAX_TEAM_API_MESSAGE, TeamApiResult
from server.host.routes.workspace import MAX_LIST_PAGE, EntryView, Listing
from server.host.workspace.paths import MAX_PART_BYTES, MAX_PATH_CHARS
from server.host.workspace.workspaces import WorkspaceRef
from tests.host.routes.conftest import Team, refused
from tests.support.clock import FakeClock
from tests.support.hub_server import RunningHub
from tests.support.peers import peer_member

CHUNK = 128 * 1024


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def upload(
    connection: HostConnection, data: bytes, path: str, **where: Any
) -> dict[str, Any]:
    started = await connection.call(
        "workspace-v1/upload_start", {"path": path, "size": len(data), **where}
    )
    assert started["chunkBytes"] == CHUNK
    for offset in range(0, len(data), CHUNK):
        progress = await connection.call(
            "workspace-v1/upload_chunk",
            {
                "uploadId": started["uploadId"],
                "offset": offset,
                "data": b64(data[offset : offset + CHUNK]),
            },
        )
        assert progress["received"] == min(len(data), offset + CHUNK)
    finished: dict[str, Any] = await connection.call(
        "workspace-v1/upload_finish", {"uploadId": started["uploadId"]}
    )
    return finished


async def download(connection: HostConnection, path: str, **where: Any) -> bytes:
    got, offset = b"", 0
    while True:
        part = await connection.call(
            "workspace-v1/download", {"path": path, "offset": offset, **where}
        )
        got += base64.b64decode(part["data"])
        offset = len(got)
        if part["eof"]:
            assert part["size"] == len(got)
            return got


async def test_a_large_file_goes_up_and_down_in_chunks(team: Team) -> None:
    data = secrets.token_bytes(CHUNK * 2 + 1000)
    written = await upload(team.member, data, "reports/big.bin")
    assert written == {"path": "reports/big.bin", "size": len(data), "created": True}
    listing = await team.admin.call("workspace-v1/list", {"path": "reports"})
    assert [(e["name"], e["kind"], e["size"]) for e in listing["entries"]] == [
        ("big.bin", "file", len(data))
    ]
    back = await download(team.admin, "reports/big.bin")
    assert hashlib.sha256(back).digest() == hashlib.sha256(data).digest()
    deleted = await team.member.call("workspace-v1/delete", {"path": "reports"})
    assert deleted == {"deleted": True, "kind": "folder"}
    assert await refused(team.admin, "workspace-v1/download", {"path": "reports/big.bin"}) == (
        "workspaceNotFound"
    )


async def test_an_agents_workspace_by_role_and_thread_visibility(
    team: Team, server: RunningHub
) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    where = {"agentId": agent["id"]}
    await server.builtin.services.workspace.write(
        WorkspaceRef(team.team_id, agent["id"]), "found.txt", b"prices"
    )
    # The admin sees every agent's workspace; the member none whose thread they do not see.
    assert await download(team.admin, "found.txt", **where) == b"prices"
    for route, args in (
        ("workspace-v1/list", {}),
        ("workspace-v1/download", {"path": "found.txt"}),
        ("workspace-v1/upload_start", {"path": "x.txt", "size": 1}),
        ("workspace-v1/delete", {"path": "found.txt"}),
    ):
        assert await refused(team.member, route, {**args, **where}) == "agentNotFound"
    # The admin's own unshared thread does not show it to the member either...
    thread = await team.admin.call("threads-v1/start", {"agentId": agent["id"], "title": "A"})
    assert await refused(team.member, "workspace-v1/list", where) == "agentNotFound"
    # ...a shared one does, and so does one of the member's own.
    await team.admin.call("threads-v1/share", {"threadId": thread["id"], "shared": True})
    assert await download(team.member, "found.txt", **where) == b"prices"
    await team.admin.call("threads-v1/share", {"threadId": thread["id"], "shared": False})
    await team.member.call("threads-v1/start", {"agentId": agent["id"], "title": "Mine"})
    await upload(team.member, b"notes", "notes.txt", **where)
    names = [e["name"] for e in (await team.member.call("workspace-v1/list", where))["entries"]]
    assert names == ["found.txt", "notes.txt"]
    missing = {"agentId": "f" * 32}
    assert await refused(team.admin, "workspace-v1/list", missing) == "agentNotFound"
    # Deleting the agent deletes its workspace with it.
    data_dir = server.builtin.services.settings.data_dir
    folder = data_dir / "workspace" / team.team_id / "agents" / agent["id"]
    assert await asyncio.to_thread(folder.is_dir)
    await team.admin.call("agents-v1/delete", {"id": agent["id"]})
    assert not await asyncio.to_thread(folder.exists)


async def test_uploads_refused_when_they_cannot_be_right(team: Team, server: RunningHub) -> None:
    cap = server.builtin.services.settings.host.workspace_file_max_bytes
    too_big = {"path": "big.bin", "size": cap + 1}
    assert await refused(team.member, "workspace-v1/upload_start", too_big) == (
        "workspaceFileTooLarge"
    )
    past_any_file = {"path": "a.txt", "offset": 2**63}
    assert await refused(team.member, "workspace-v1/download", past_any_file) == ("invalidArgument")
    bad_path = {"path": "../escape.txt", "size": 1}
    assert await refused(team.member, "workspace-v1/upload_start", bad_path) == (
        "workspacePathInvalid"
    )
    started = await team.member.call("workspace-v1/upload_start", {"path": "a.txt", "size": 4})
    ref = {"uploadId": started["uploadId"]}
    out_of_order = {**ref, "offset": 2, "data": b64(b"cd")}
    assert await refused(team.member, "workspace-v1/upload_chunk", out_of_order) == (
        "workspaceChunkInvalid"
    )
    past_end = {**ref, "offset": 0, "data": b64(b"abcde")}
    assert await refused(team.member, "workspace-v1/upload_chunk", past_end) == (
        "workspaceChunkInvalid"
    )
    not_base64 = {**ref, "offset": 0, "data": "@@@@"}
    assert await refused(team.member, "workspace-v1/upload_chunk", not_base64) == (
        "invalidArgument"
    )
    await team.member.call("workspace-v1/upload_chunk", {**ref, "offset": 0, "data": b64(b"ab")})
    assert await refused(team.member, "workspace-v1/upload_finish", ref) == (
        "workspaceUploadIncomplete"
    )
    # Another member cannot touch it; nothing half-sent is in the workspace.
    assert await refused(team.admin, "workspace-v1/upload_finish", ref) == (
        "workspaceUploadNotFound"
    )
    assert (await team.member.call("workspace-v1/list"))["entries"] == []
    assert await team.member.call("workspace-v1/upload_cancel", ref) == {"cancelled": True}
    assert await refused(team.member, "workspace-v1/upload_finish", ref) == (
        "workspaceUploadNotFound"
    )


async def test_two_chunks_sent_at_one_offset_are_one_chunk_and_a_refusal(team: Team) -> None:
    started = await team.member.call("workspace-v1/upload_start", {"path": "twice.txt", "size": 4})
    ref = {"uploadId": started["uploadId"]}
    first = {**ref, "offset": 0, "data": b64(b"ab")}
    taken, refusal = await asyncio.gather(
        team.member.call("workspace-v1/upload_chunk", first),
        refused(team.member, "workspace-v1/upload_chunk", first),
    )
    assert (taken, refusal) == ({"received": 2}, "workspaceChunkInvalid")
    await team.member.call("workspace-v1/upload_chunk", {**ref, "offset": 2, "data": b64(b"cd")})
    await team.member.call("workspace-v1/upload_finish", ref)
    got = await team.member.call("workspace-v1/download", {"path": "twice.txt", "offset": 0})
    assert base64.b64decode(got["data"]) == b"abcd"


async def test_an_unfinished_upload_expires(
    team: Team, server: RunningHub, clock: FakeClock
) -> None:
    started = await team.member.call("workspace-v1/upload_start", {"path": "a.txt", "size": 4})
    seconds = server.builtin.services.settings.host.workspace_upload_seconds
    clock.advance(seconds + 1)
    chunk = {"uploadId": started["uploadId"], "offset": 0, "data": b64(b"abcd")}
    assert await refused(team.member, "workspace-v1/upload_chunk", chunk) == (
        "workspaceUploadNotFound"
    )


async def test_another_team_sees_nothing(team: Team, server: RunningHub, tmp_path: Path) -> None:
    await upload(team.member, b"ours", "team.txt")
    await server.create_owner("other@example.com", "Team B")
    other = await peer_member(server, "other@example.com", tmp_path)
    connection = await other.connect(server.builtin.services.host_id)
    try:
        assert (await connection.call("workspace-v1/list"))["entries"] == []
        assert await refused(connection, "workspace-v1/download", {"path": "team.txt"}) == (
            "workspaceNotFound"
        )
    finally:
        await connection.close()
        await other.hub.close()


async def test_a_large_folder_is_listed_page_by_page(team: Team, server: RunningHub) -> None:
    # 1,500 files with 200-character names, inside the 10,000-file quota, make an answer
    # larger than one team-api message: a page at a time, each is answered.
    workspace = server.builtin.services.workspace
    ref = WorkspaceRef(team.team_id, None)
    await workspace.write(ref, "big/0", b"")
    folder = workspace._workspaces.folder(ref).root / "big"
    names = ["0", *(f"{n:05d}" + "x" * 195 for n in range(1500))]
    await asyncio.to_thread(lambda: [(folder / name).write_bytes(b"") for name in names[1:]])
    listed: list[str] = []
    while True:
        page = await team.member.call("workspace-v1/list", {"path": "big", "offset": len(listed)})
        assert page["total"] == len(names)
        if not page["entries"]:
            break
        assert len(page["entries"]) == min(MAX_LIST_PAGE, len(names) - len(listed))
        listed += [entry["name"] for entry in page["entries"]]
    assert listed == sorted(names)
    small = await team.member.call("workspace-v1/list", {"path": "big", "offset": 1, "limit": 2})
    assert [e["name"] for e in small["entries"]] == sorted(names)[1:3]
    over = {"path": "big", "limit": MAX_LIST_PAGE + 1}
    assert await refused(team.member, "workspace-v1/list", over) == "invalidArgument"


def test_a_full_page_of_the_longest_names_fits_one_message() -> None:
    # A name of control characters, each escaped as six bytes, is the longest a name encodes to.
    name = "\x01" * MAX_PART_BYTES
    entry = EntryView(name=name, kind="folder", size=2**63, modified_at=-1.2345678901234567e-300)
    listing = Listing(path="\U0001f600" * MAX_PATH_CHARS, entries=[entry] * MAX_LIST_PAGE, total=1)
    answer = encode(TeamApiResult(id="\x01" * 64, result=listing.model_dump(by_alias=True)))
    assert utf8_size(answer) <= MAX_TEAM_API_MESSAGE
