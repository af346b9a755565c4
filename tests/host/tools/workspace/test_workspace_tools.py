"""The workspace tools as an agent calls them: text by lines with pagination past 200,
binary as data: URLs, types from the name, the shared scope, and refusals as results."""

from __future__ import annotations

import base64
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from server.config import HostSettings
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.services.workspace import WorkspaceService
from server.host.tools.catalog import call_tool
from server.host.tools.context import ToolContext
from server.host.tools.workspace import workspace_read as read_tool
from server.host.workspace.quotas import WorkspaceLimits
from server.host.workspace.workspaces import Workspaces
from tests.host.tools.conftest import AGENT, TEAM
from tests.support.clock import FakeClock
from tests.support.databases import scratch_database

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest_asyncio.fixture(loop_scope="module")
async def workspace(tmp_path: Path) -> AsyncIterator[WorkspaceService]:
    async with scratch_database("sqlite", tmp_path) as database:
        db = database.open()
        limits = WorkspaceLimits.from_settings(HostSettings())
        yield WorkspaceService(
            db, FakeClock(), Workspaces(tmp_path / "data", limits), upload_seconds=60
        )
        await db.close()


def context_of(tmp_path: Path, workspace: WorkspaceService, caller: Caller) -> ToolContext:
    """An agent's context for tools that need no browser: the engine is never started."""
    return ToolContext(
        engine=BrowserEngine(tmp_path), team_id=TEAM, caller=caller, workspace=workspace
    )


@pytest.fixture
def agent(tmp_path: Path, workspace: WorkspaceService) -> ToolContext:
    return context_of(tmp_path, workspace, AGENT)


async def call(context: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    return await call_tool(context, name, args)


async def test_text_round_trip_and_listing(agent: ToolContext) -> None:
    written = await call(agent, "workspace_write", path="notes/todo.md", content="- milk\n- eggs\n")
    assert written == {"path": "notes/todo.md", "scope": "agent", "bytes": 14, "created": True}
    read = await call(agent, "workspace_read", path="notes/todo.md")
    assert (read["mode"], read["content"], read["totalLines"]) == ("text", "- milk\n- eggs\n", 2)
    assert "nextOffset" not in read
    listed = await call(agent, "workspace_list", path="notes")
    assert listed["entries"] == [{"name": "todo.md", "kind": "file", "bytes": 14}]
    assert (listed["workspaceFiles"], listed["workspaceBytes"]) == (1, 14)


async def test_a_long_text_comes_in_pages_of_200_lines(agent: ToolContext) -> None:
    text = "".join(f"line {n}\n" for n in range(1, 451))
    await call(agent, "workspace_write", path="long.txt", content=text)
    first = await call(agent, "workspace_read", path="long.txt")
    assert (first["lines"], first["totalLines"], first["nextOffset"]) == (200, 450, 201)
    assert first["content"].startswith("line 1\n")
    assert first["content"].endswith("line 200\n")
    last = await call(agent, "workspace_read", path="long.txt", offset=401, limit=100)
    assert (last["lines"], last["content"].splitlines()[-1]) == (50, "line 450")
    assert "nextOffset" not in last
    too_many = await call(agent, "workspace_read", path="long.txt", limit=201)
    assert too_many["error"]["code"] == "invalidArguments"
    past = await call(agent, "workspace_read", path="long.txt", offset=451)
    assert past["error"]["code"] == "workspaceOffsetPastEnd"


async def test_a_file_is_decoded_and_split_off_the_event_loop(
    agent: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file may be 25 MiB: its whole text is decoded and split on every read."""
    threads: list[bool] = []
    answer = read_tool.read_answer

    def recorded(*args: Any) -> dict[str, Any]:
        threads.append(threading.current_thread() is threading.main_thread())
        return answer(*args)

    monkeypatch.setattr(read_tool, "read_answer", recorded)
    await call(agent, "workspace_write", path="big.csv", content="a,b\n" * 1000)
    read = await call(agent, "workspace_read", path="big.csv", offset=999)
    assert (read["lines"], read["totalLines"]) == (2, 1000)
    await call(agent, "workspace_read", path="big.csv", mode="blob")
    assert threads == [False, False]


def test_a_data_url_too_long_to_show_is_never_made() -> None:
    args = read_tool.ReadArgs(path="photo.png", mode="blob")
    just_fits = (read_tool.MAX_DATA_URL_CHARS - len("data:image/png;base64,")) // 4 * 3
    assert read_tool.read_answer("photo.png", PNG[:1] * just_fits, args)["dataUrl"]
    told = read_tool.read_answer("photo.png", PNG[:1] * (just_fits + 1), args)
    assert (told["dataUrl"], told["bytes"]) == (None, just_fits + 1)


async def test_binary_as_data_url_and_the_type_from_the_name(agent: ToolContext) -> None:
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    written = await call(agent, "workspace_write", path="pixel.png", content=url)
    assert written["bytes"] == len(PNG)
    read = await call(agent, "workspace_read", path="pixel.png")
    assert (read["mode"], read["mime"], read["dataUrl"]) == ("blob", "image/png", url)
    # A text-claiming data: URL under a .bin name is still typed by its name.
    await call(agent, "workspace_write", path="data.bin", content="data:text/plain,%00%01%02")
    blob = await call(agent, "workspace_read", path="data.bin")
    assert (blob["mime"], blob["bytes"]) == ("application/octet-stream", 3)
    refused = await call(agent, "workspace_read", path="data.bin", mode="text")
    assert refused["error"]["code"] == "workspaceNotText"
    bad = await call(agent, "workspace_write", path="x.png", content="data:image/png;base64,@@")
    assert bad["error"]["code"] == "workspaceContentInvalid"


@pytest.mark.parametrize(
    "content", ["x\ud800", "data:text/plain,x\udfff", "data:image/png;base64,\u00e9AAA"]
)
async def test_content_that_is_not_utf_8_is_refused(agent: ToolContext, content: str) -> None:
    # JSON arguments can carry a lone surrogate ("x\\ud800"); base64 is ASCII only.
    result = await call(agent, "workspace_write", path="a.txt", content=content)
    assert result["error"]["code"] == "workspaceContentInvalid"
    assert (await call(agent, "workspace_list"))["entries"] == []


async def test_team_scope_is_shared_and_agent_scope_is_not(
    tmp_path: Path, agent: ToolContext, workspace: WorkspaceService
) -> None:
    other = context_of(tmp_path, workspace, Caller.agent("b" * 32, "thread-2"))
    await call(agent, "workspace_write", path="plan.md", content="mine")
    await call(agent, "workspace_write", path="plan.md", content="ours", scope="team")
    assert (await call(other, "workspace_read", path="plan.md"))["error"]["code"] == (
        "workspaceNotFound"
    )
    shared = await call(other, "workspace_read", path="plan.md", scope="team")
    assert shared["content"] == "ours"
    deleted = await call(other, "workspace_delete", path="plan.md", scope="team")
    assert deleted["kind"] == "file"
    assert (await call(agent, "workspace_read", path="plan.md"))["content"] == "mine"


ESCAPES = ["../escape.txt", "/etc/passwd", "a\x00b", "CON", "\uff0e\uff0e/x"]


@pytest.mark.parametrize("path", ESCAPES)
async def test_an_escape_is_refused_as_a_result(agent: ToolContext, path: str) -> None:
    result = await call(agent, "workspace_write", path=path, content="x")
    assert result["error"]["code"] == "workspacePathInvalid"


async def test_only_an_agent_has_a_workspace(tmp_path: Path, workspace: WorkspaceService) -> None:
    person = context_of(tmp_path, workspace, Caller.person("account-1"))
    result = await call(person, "workspace_list")
    assert result["error"]["code"] == "agentsOnly"
