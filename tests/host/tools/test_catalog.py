"""The catalog and call_tool: every call returns a dict, capped at 20,000 characters."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from server.host.tools.args import TabArgs
from server.host.tools.base import Tool
from server.host.tools.catalog import CATALOG, call_tool
from server.host.tools.context import ToolContext
from server.host.tools.results import MAX_RESULT_CHARS, ToolFailure, cap_result
from tests.host.tools.conftest import call, open_page
from tests.support.sites import Site

MINE = (
    "snapshot",
    "click",
    "type",
    "press",
    "hover",
    "scroll",
    "select_option",
    "set_checked",
    "wait_for",
    "evaluate",
    "fill_fields",
)


def test_each_tool_advertises_a_schema_a_description_and_a_gate() -> None:
    for name in MINE:
        tool = CATALOG[name]
        schema = tool.input_schema()
        assert schema["type"] == "object"
        assert "tabId" in schema["properties"]
        assert schema["additionalProperties"] is False
        assert len(tool.description) > 40
    assert not CATALOG["snapshot"].gated
    assert CATALOG["click"].gated
    assert CATALOG["fill_fields"].gated


async def test_an_unknown_tool_is_an_error(context: ToolContext) -> None:
    assert (await call_tool(context, "teleport", {}))["error"]["code"] == "unknownTool"


async def test_bad_arguments_are_an_error_that_says_which(context: ToolContext) -> None:
    result = await call_tool(context, "click", {"tabId": "x", "target": {"kind": "ref"}})
    assert result["error"]["code"] == "invalidArguments"
    assert "target.ref.ref" in result["error"]["message"]
    extra = await call_tool(context, "snapshot", {"tabId": "x", "zoom": 2})
    assert extra["error"]["code"] == "invalidArguments"
    not_an_object = await call_tool(context, "snapshot", ["x"])  # type: ignore[arg-type]
    assert not_an_object["error"]["code"] == "invalidArguments"


async def test_a_missing_tab_is_an_error(context: ToolContext) -> None:
    result = await call(context, "snapshot", tabId="no-such-tab")
    assert result["error"]["code"] == "tabNotFound"


class _Args(TabArgs):
    pass


_SECRET = "-".join(("sk", "very", "secret"))


async def _raises(_context: ToolContext, _args: Any) -> dict[str, Any]:
    raise RuntimeError(f"token={_SECRET}")


async def _refuses(_context: ToolContext, _args: Any) -> dict[str, Any]:
    raise ToolFailure("targetDisabled", "the button is disabled", index=3)


async def _huge(_context: ToolContext, _args: Any) -> dict[str, Any]:
    return {"tree": "line\n" * 10_000, "url": "http://example.org/"}


@pytest.fixture
def extra_tools() -> Any:
    added = {
        name: Tool(name=name, description="test", args=_Args, gated=False, run=run)
        for name, run in (("boom", _raises), ("refuse", _refuses), ("huge", _huge))
    }
    CATALOG.update(added)
    yield
    for name in added:
        del CATALOG[name]


@pytest.mark.usefixtures("extra_tools")
async def test_an_exception_inside_a_tool_becomes_an_error_without_its_message(
    context: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        result = await call_tool(context, "boom", {"tabId": "t"})
    assert result["error"]["code"] == "toolFailed"
    assert _SECRET not in json.dumps(result)
    assert _SECRET not in caplog.text
    assert "RuntimeError" in caplog.text


@pytest.mark.usefixtures("extra_tools")
async def test_a_refusal_keeps_its_code_and_details(context: ToolContext) -> None:
    result = await call_tool(context, "refuse", {"tabId": "t"})
    assert result == {
        "error": {"code": "targetDisabled", "message": "the button is disabled", "index": 3}
    }


@pytest.mark.usefixtures("extra_tools")
async def test_a_long_result_is_cut_and_flagged(context: ToolContext) -> None:
    result = await call_tool(context, "huge", {"tabId": "t"})
    assert result["truncated"] is True
    assert result["url"] == "http://example.org/"
    assert len(json.dumps(result, ensure_ascii=False)) <= MAX_RESULT_CHARS


async def test_an_evaluate_result_is_capped(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/changes.html")
    result = await call(context, "evaluate", tabId=tab.id, expression="'\"\\n'.repeat(30000)")
    assert result["truncated"] is True
    assert len(json.dumps(result, ensure_ascii=False)) <= MAX_RESULT_CHARS
    failed = await call(context, "evaluate", tabId=tab.id, expression="no_such_name.x")
    assert failed["error"]["code"] == "scriptError"


@pytest.mark.parametrize(
    "result",
    [
        {"text": "a" * 50_000},
        {"text": '"\\\n' * 20_000},
        {"text": "\u00e9\u4e2d" * 20_000},
        {"items": [{"n": i, "name": f"item {i}"} for i in range(5_000)]},
        {"a": "x" * 15_000, "b": {"c": ["y" * 15_000]}},
    ],
)
def test_cap_result_always_fits_and_stays_valid(result: dict[str, Any]) -> None:
    capped = cap_result(result)
    text = json.dumps(capped, ensure_ascii=False)
    assert len(text) <= MAX_RESULT_CHARS
    assert capped["truncated"] is True
    assert json.loads(text) == capped


def test_a_short_result_is_left_alone() -> None:
    assert cap_result({"ok": True}) == {"ok": True}


async def test_wait_for_text_and_states(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/changes.html")
    shown = await call(context, "wait_for", tabId=tab.id, text="Changes")
    assert shown["ok"] is True
    loaded = await call(context, "wait_for", tabId=tab.id, state="load")
    assert loaded["ok"] is True
    quiet = await call(context, "wait_for", tabId=tab.id, state="dom-quiet")
    assert quiet["ok"] is True
    missing = await call(context, "wait_for", tabId=tab.id, text="never there", timeout=300)
    assert missing["error"]["code"] == "waitTimeout"
    both = await call(context, "wait_for", tabId=tab.id, text="a", state="load")
    assert both["error"]["code"] == "invalidArguments"
    target = await call(
        context, "wait_for", tabId=tab.id, target={"kind": "css", "selector": "#more"}
    )
    assert target["ok"] is True
