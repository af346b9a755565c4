"""Tool results are cut to the cap exactly, on the text the model reads, keeping what fits."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from server.host.tools.context import ToolContext
from server.host.tools.results import MAX_RESULT_CHARS, cap_result, serialize_result
from tests.host.tools.conftest import call, open_page
from tests.support.sites import Site

CUT_MARK = "\n[... cut: the result was longer than 20,000 characters]"


def _kept(text: str) -> str:
    """A cut string without the mark the cut put at its end."""
    assert text.endswith(CUT_MARK)
    return text.removesuffix(CUT_MARK)


def _fits(result: dict[str, Any], *, slack: int = 0) -> str:
    """``result``'s text, checked to be within the cap and within ``slack`` of it."""
    text = serialize_result(result)
    assert MAX_RESULT_CHARS - slack <= len(text) <= MAX_RESULT_CHARS
    assert json.loads(text) == result
    return text


@pytest.mark.parametrize("length", [2_000_000, 100_000, 20_001])
def test_a_long_string_keeps_all_the_cap_holds(length: int) -> None:
    capped = cap_result({"value": "x" * length})
    _fits(capped)
    assert capped["truncated"] is True
    assert len(_kept(capped["value"])) >= MAX_RESULT_CHARS - 100


def test_cjk_is_counted_as_the_model_reads_it() -> None:
    capped = cap_result({"value": "漢字" * 1_000_000})
    text = _fits(capped)
    assert "漢字" in text  # written as itself, not as \u escapes
    assert len(_kept(capped["value"])) >= MAX_RESULT_CHARS - 100


@pytest.mark.parametrize("unit", ['"', "\\", "\n", "\x01", '"\\\n\t\x1f', 'a"b\\c\rd'])
def test_escaped_characters_are_paid_for_and_never_split(unit: str) -> None:
    original = unit * 60_000
    capped = cap_result({"value": original})
    # One escape is at most six characters: the cut is within one of the cap.
    _fits(capped, slack=6)
    assert original.startswith(_kept(capped["value"]))


def test_a_character_outside_the_bmp_is_kept_whole() -> None:
    for original in ("😀" * 50_000, "\ud83d\ude00" * 50_000):
        capped = cap_result({"value": original})
        _fits(capped, slack=2)
        kept = _kept(capped["value"])
        assert original.startswith(kept)
        assert not "\ud800" <= kept[-1] <= "\udbff"


def test_nested_strings_the_later_one_is_cut() -> None:
    capped = cap_result({"a": "x" * 15_000, "b": {"c": ["y" * 15_000]}})
    _fits(capped, slack=1)
    assert capped["a"] == "x" * 15_000
    assert len(_kept(capped["b"]["c"][0])) > 4_800


def test_a_list_keeps_as_many_items_as_fit() -> None:
    items = [{"n": i, "name": f"item {i}"} for i in range(10_000)]
    capped = cap_result({"value": items})
    _fits(capped, slack=40)
    kept = len(capped["value"])
    assert capped["value"] == items[:kept]
    one_more = {**capped, "value": items[: kept + 1]}
    assert len(serialize_result(one_more)) > MAX_RESULT_CHARS


def test_a_list_of_long_strings_keeps_the_first_and_cuts_the_last_kept() -> None:
    rows = ["r" * 3_000 for _ in range(100)]
    capped = cap_result({"value": rows})
    _fits(capped, slack=1)
    *whole, last = capped["value"]
    assert whole == rows[: len(whole)]
    assert len(whole) == 6
    assert len(_kept(last)) > 1_000


def test_a_table_of_numbers_is_cut_in_its_last_kept_row() -> None:
    table = [list(range(2_000)) for _ in range(300)]
    capped = cap_result({"value": table})
    _fits(capped, slack=10)
    first, last = capped["value"]
    assert first == table[0]
    assert last == table[1][: len(last)]


def test_many_long_strings_side_by_side_keep_the_first() -> None:
    capped = cap_result({"a": "x" * 30_000, "b": "y" * 30_000})
    _fits(capped, slack=1)
    assert len(_kept(capped["a"])) > 19_800
    assert capped["b"] == CUT_MARK


def test_a_value_json_cannot_hold_becomes_its_text() -> None:
    when = datetime(2024, 5, 1, tzinfo=UTC)
    assert json.loads(serialize_result({"when": when})) == {"when": str(when)}
    capped = cap_result({"when": when, "value": "x" * 30_000})
    assert capped["when"] == str(when)
    _fits(capped)


async def test_evaluate_returning_nearly_a_megabyte_keeps_the_cap(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/changes.html")
    result = await call(context, "evaluate", tabId=tab.id, expression="'x'.repeat(1_000_000)")
    assert result["truncated"] is True
    _fits(result)
    assert len(_kept(result["value"])) >= MAX_RESULT_CHARS - 100


def _words_in_order(text: str, prefix: str) -> int:
    """How many numbered words ``text`` holds; each whole and in order from 0."""
    words = re.findall(rf"{prefix}\d+", text)
    assert words == [f"{prefix}{i}" for i in range(len(words))]
    return len(words)


async def test_a_huge_paragraph_is_cut_inside_at_a_word_end(
    context: ToolContext, site: Site
) -> None:
    tab = await open_page(context, site, "/big-paragraph.html")
    read = await call(context, "get_tab_content", tabId=tab.id)
    text = serialize_result(read)
    assert read["truncated"] is True
    assert len(text) <= MAX_RESULT_CHARS
    content = read["content"]
    assert content.startswith("<!-- css: h1 -->\n\n# A page with one huge paragraph\n\nword0 word1")
    assert "After the huge paragraph" not in content
    assert len(text) > MAX_RESULT_CHARS - 20  # cut at a word end near the cap
    assert _words_in_order(content, "word") > 2_000

    short = await call(context, "get_tab_content", tabId=tab.id, maxLength=500)
    assert short["truncated"] is True
    assert 450 <= len(short["content"]) <= 500
    _words_in_order(short["content"], "word")


async def test_a_cut_quote_and_a_cut_cell_end_the_content(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/big-paragraph.html")
    quote = await call(context, "get_tab_content", tabId=tab.id, selector="#quote")
    assert quote["truncated"] is True
    assert quote["content"].startswith("> quoted0 quoted1")
    assert len(serialize_result(quote)) > MAX_RESULT_CHARS - 20
    _words_in_order(quote["content"], "quoted")

    table = await call(context, "get_tab_content", tabId=tab.id, selector="#cells", maxLength=2_000)
    assert table["truncated"] is True
    lines = table["content"].splitlines()
    assert lines[2:5] == ["| Name | Text |", "| --- | --- |", "| first | short |"]
    assert lines[5].startswith("| second | cell0 cell1")
    assert "third" not in table["content"]
    assert len(table["content"]) > 1_800
    _words_in_order(table["content"], "cell")


async def test_a_two_megabyte_cjk_page_fills_the_cap(context: ToolContext, site: Site) -> None:
    tab = await open_page(context, site, "/cjk.html")
    read = await call(context, "get_tab_content", tabId=tab.id)
    assert read["truncated"] is True
    assert read["title"] == "漢字のページ"
    text = serialize_result(read)
    assert MAX_RESULT_CHARS - 20 < len(text) <= MAX_RESULT_CHARS
    assert read["content"].startswith("<!-- css: h1 -->\n\n# 漢字の見出し\n\n漢字漢字")
