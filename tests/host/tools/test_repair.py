"""Argument repair: each form agents write is accepted, ambiguity stays a refusal, and the
vault, secret and payment tools are never repaired."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from server.host.tools.catalog import CATALOG
from server.host.tools.repair import ScriptStep, repair_arguments, script_step
from server.host.tools.results import ToolFailure

TAB = "tab-1"

# (form, tool, as an agent wrote it, as the tool advertises it)
FORMS: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    (
        "ref string target",
        "click",
        {"tabId": TAB, "target": "3:main:12"},
        {"tabId": TAB, "target": {"kind": "ref", "ref": "3:main:12", "revision": 3}},
    ),
    (
        "whole snapshot line as target",
        "click",
        {"tabId": TAB, "target": '3:main:12 link "Travel"'},
        {"tabId": TAB, "target": {"kind": "ref", "ref": "3:main:12", "revision": 3}},
    ),
    (
        "snapshot line with states as target",
        "hover",
        {"tabId": TAB, "target": '  7:f1:4 button "Menu" [collapsed]'},
        {"tabId": TAB, "target": {"kind": "ref", "ref": "7:f1:4", "revision": 7}},
    ),
    (
        "role line as target",
        "click",
        {"tabId": TAB, "target": 'link "Travel"'},
        {"tabId": TAB, "target": {"kind": "role", "role": "link", "name": "Travel"}},
    ),
    (
        "css-prefixed target",
        "click",
        {"tabId": TAB, "target": "css #main"},
        {"tabId": TAB, "target": {"kind": "css", "selector": "#main"}},
    ),
    (
        "CSS selector as target",
        "click",
        {"tabId": TAB, "target": "form > button.primary"},
        {"tabId": TAB, "target": {"kind": "css", "selector": "form > button.primary"}},
    ),
    (
        "target object with ref and no kind",
        "click",
        {"tabId": TAB, "target": {"ref": "4:main:2"}},
        {"tabId": TAB, "target": {"kind": "ref", "ref": "4:main:2", "revision": 4}},
    ),
    (
        "target object with selector and no kind",
        "click",
        {"tabId": TAB, "target": {"selector": "#go"}},
        {"tabId": TAB, "target": {"kind": "css", "selector": "#go"}},
    ),
    (
        "target object with css and no kind",
        "click",
        {"tabId": TAB, "target": {"css": "#go"}},
        {"tabId": TAB, "target": {"kind": "css", "selector": "#go"}},
    ),
    (
        "target object with role and no kind",
        "click",
        {"tabId": TAB, "target": {"role": "button", "name": "Next"}},
        {"tabId": TAB, "target": {"kind": "role", "role": "button", "name": "Next"}},
    ),
    (
        "target object with text and no kind",
        "click",
        {"tabId": TAB, "target": {"text": "Show more"}},
        {"tabId": TAB, "target": {"kind": "text", "text": "Show more"}},
    ),
    (
        "target object with x and y and no kind",
        "click",
        {"tabId": TAB, "target": {"x": 36, "y": 133.5}},
        {"tabId": TAB, "target": {"kind": "point", "x": 36, "y": 133.5}},
    ),
    (
        "ref target without revision",
        "click",
        {"tabId": TAB, "target": {"kind": "ref", "ref": "9:main:1"}},
        {"tabId": TAB, "target": {"kind": "ref", "ref": "9:main:1", "revision": 9}},
    ),
    (
        "top-level ref on an action tool",
        "set_checked",
        {"tabId": TAB, "ref": "2:main:5", "checked": True},
        {
            "tabId": TAB,
            "checked": True,
            "target": {"kind": "ref", "ref": "2:main:5", "revision": 2},
        },
    ),
    (
        "type with replace true",
        "type",
        {"tabId": TAB, "target": "1:main:1", "text": "hi", "replace": True},
        {
            "tabId": TAB,
            "target": {"kind": "ref", "ref": "1:main:1", "revision": 1},
            "text": "hi",
            "mode": "replace",
        },
    ),
    (
        "type with replace false",
        "type",
        {"tabId": TAB, "target": "1:main:1", "text": "hi", "replace": False},
        {
            "tabId": TAB,
            "target": {"kind": "ref", "ref": "1:main:1", "revision": 1},
            "text": "hi",
            "mode": "append",
        },
    ),
    (
        "type with clear true",
        "type",
        {"tabId": TAB, "target": "1:main:1", "text": "hi", "clear": True},
        {
            "tabId": TAB,
            "target": {"kind": "ref", "ref": "1:main:1", "revision": 1},
            "text": "hi",
            "mode": "replace",
        },
    ),
    (
        "type with clear false",
        "type",
        {"tabId": TAB, "target": "1:main:1", "text": "hi", "clear": False},
        {
            "tabId": TAB,
            "target": {"kind": "ref", "ref": "1:main:1", "revision": 1},
            "text": "hi",
            "mode": "append",
        },
    ),
    (
        "wait_for with snapshot",
        "wait_for",
        {"tabId": TAB, "text": "Done", "snapshot": True},
        {"tabId": TAB, "text": "Done"},
    ),
    (
        "wait_for with a condition naming a field",
        "wait_for",
        {"tabId": TAB, "condition": "text", "text": "Done"},
        {"tabId": TAB, "text": "Done"},
    ),
    (
        "wait_for networkidle",
        "wait_for",
        {"tabId": TAB, "state": "networkidle"},
        {"tabId": TAB, "state": "dom-quiet"},
    ),
    (
        "wait_for idle",
        "wait_for",
        {"tabId": TAB, "state": "idle"},
        {"tabId": TAB, "state": "dom-quiet"},
    ),
    (
        "wait_for quiet",
        "wait_for",
        {"tabId": TAB, "state": "quiet"},
        {"tabId": TAB, "state": "dom-quiet"},
    ),
    (
        "wait_for networkidle0 (Puppeteer)",
        "wait_for",
        {"tabId": TAB, "state": "networkidle0"},
        {"tabId": TAB, "state": "dom-quiet"},
    ),
    (
        "wait_for complete",
        "wait_for",
        {"tabId": TAB, "state": "complete"},
        {"tabId": TAB, "state": "load"},
    ),
    (
        "wait_for interactive",
        "wait_for",
        {"tabId": TAB, "state": "interactive"},
        {"tabId": TAB, "state": "domcontentloaded"},
    ),
    (
        "wait_for visible on a target wait",
        "wait_for",
        {"tabId": TAB, "target": "#done", "state": "visible"},
        {"tabId": TAB, "target": {"kind": "css", "selector": "#done"}},
    ),
    (
        "wait_for attached on a target wait",
        "wait_for",
        {"tabId": TAB, "target": "#done", "state": "attached"},
        {"tabId": TAB, "target": {"kind": "css", "selector": "#done"}},
    ),
    (
        "fill_fields value as text",
        "fill_fields",
        {"tabId": TAB, "revision": 5, "fields": [{"ref": "5:main:1", "value": "Ana"}]},
        {"tabId": TAB, "revision": 5, "fields": [{"ref": "5:main:1", "text": "Ana"}]},
    ),
    (
        "fill_fields revision from the refs",
        "fill_fields",
        {
            "tabId": TAB,
            "fields": [{"ref": "5:main:1", "text": "A"}, {"ref": "5:main:2", "text": "B"}],
        },
        {
            "tabId": TAB,
            "revision": 5,
            "fields": [{"ref": "5:main:1", "text": "A"}, {"ref": "5:main:2", "text": "B"}],
        },
    ),
    (
        "open with a tabId",
        "open",
        {"tabId": TAB, "url": "example.com"},
        {"url": "example.com"},
    ),
    (
        "whole call with a namespaced name",
        "snapshot",
        {"name": "browser.snapshot", "arguments": {"tabId": TAB}},
        {"tabId": TAB},
    ),
    (
        "whole call with arguments as JSON text",
        "navigate",
        {"name": "navigate", "arguments": '{"tabId": "tab-1", "url": "example.com"}'},
        {"tabId": TAB, "url": "example.com"},
    ),
    (
        "snake_case field names",
        "navigate",
        {"tab_id": TAB, "url": "example.com"},
        {"tabId": TAB, "url": "example.com"},
    ),
    (
        "snake_case field with several words",
        "get_tab_content",
        {"tabId": TAB, "max_length": 500},
        {"tabId": TAB, "maxLength": 500},
    ),
]


# Forms the tool models take as they are too: a ref's revision is optional, and the
# models accept their Python field names (repair still refuses giving both spellings).
SCHEMA_TAKES_TOO = {
    "ref target without revision",
    "snake_case field names",
    "snake_case field with several words",
}


@pytest.mark.parametrize(
    ("form", "tool", "written", "advertised"),
    [pytest.param(*case, id=case[0]) for case in FORMS],
)
def test_each_form_is_repaired_into_the_advertised_one(
    form: str, tool: str, written: dict[str, Any], advertised: dict[str, Any]
) -> None:
    model = CATALOG[tool].args
    if form not in SCHEMA_TAKES_TOO:
        # The advertised schema did not grow to take the form: unrepaired, it is refused.
        with pytest.raises(ValidationError):
            model.model_validate(written)
    repaired = repair_arguments(tool, written)
    assert repaired == advertised
    model.model_validate(repaired)


@pytest.mark.parametrize(
    ("form", "tool", "written", "advertised"),
    [pytest.param(*case, id=case[0]) for case in FORMS],
)
def test_a_repair_repaired_again_is_the_same(
    form: str, tool: str, written: dict[str, Any], advertised: dict[str, Any]
) -> None:
    """A person approves the repaired arguments and the call repairs them again as it
    runs: both must be one set of arguments."""
    once = repair_arguments(tool, written)
    assert repair_arguments(tool, once) == once


def test_repair_leaves_the_agents_arguments_untouched() -> None:
    written = {"tab_id": TAB, "target": {"ref": "3:main:1"}, "replace": True, "text": "x"}
    before = repr(written)
    repair_arguments("type", written)
    assert repr(written) == before


def test_arguments_already_in_the_advertised_form_pass_unchanged() -> None:
    advertised = {"tabId": TAB, "target": {"kind": "css", "selector": "#a"}, "text": "x"}
    assert repair_arguments("type", advertised) == advertised


AMBIGUOUS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "target with fields of two kinds",
        "click",
        {"tabId": TAB, "target": {"ref": "1:main:1", "selector": "#a"}},
        "ambiguousTarget",
    ),
    (
        "target with both css and selector",
        "click",
        {"tabId": TAB, "target": {"kind": "css", "css": "#a", "selector": "#b"}},
        "ambiguousTarget",
    ),
    (
        "snake_case and camelCase of one field",
        "navigate",
        {"tab_id": "tab-2", "tabId": TAB, "url": "example.com"},
        "ambiguousArguments",
    ),
    (
        "top-level ref beside another target",
        "click",
        {"tabId": TAB, "ref": "1:main:1", "target": "1:main:2"},
        "ambiguousArguments",
    ),
    (
        "replace and mode that disagree",
        "type",
        {"tabId": TAB, "target": "1:main:1", "text": "x", "replace": True, "mode": "append"},
        "ambiguousArguments",
    ),
    (
        "replace and clear that disagree",
        "type",
        {"tabId": TAB, "target": "1:main:1", "text": "x", "replace": True, "clear": False},
        "ambiguousArguments",
    ),
    (
        "fill_fields value and text that disagree",
        "fill_fields",
        {"tabId": TAB, "revision": 1, "fields": [{"ref": "1:main:1", "value": "a", "text": "b"}]},
        "ambiguousArguments",
    ),
    (
        "whole call naming another tool",
        "click",
        {"name": "browser.type", "arguments": {"tabId": TAB}},
        "toolMismatch",
    ),
    (
        "whole call written out twice",
        "evaluate",
        {
            "name": "evaluate",
            "arguments": {"name": "evaluate", "arguments": {"tabId": TAB, "expression": "1"}},
        },
        "ambiguousArguments",
    ),
]


@pytest.mark.parametrize(
    ("tool", "written", "code"),
    [pytest.param(tool, written, code, id=form) for form, tool, written, code in AMBIGUOUS],
)
def test_a_form_that_can_mean_two_things_is_refused(
    tool: str, written: dict[str, Any], code: str
) -> None:
    with pytest.raises(ToolFailure) as refused:
        repair_arguments(tool, written)
    assert refused.value.code == code


UNREPAIRED_BUT_REFUSED: list[tuple[str, str, dict[str, Any]]] = [
    ("visible without a target", "wait_for", {"tabId": TAB, "state": "visible"}),
    (
        "fill_fields refs of different revisions",
        "fill_fields",
        {
            "tabId": TAB,
            "fields": [{"ref": "1:main:1", "text": "a"}, {"ref": "2:main:2", "text": "b"}],
        },
    ),
    ("a condition naming no field", "wait_for", {"tabId": TAB, "condition": "ready"}),
]


@pytest.mark.parametrize(
    ("tool", "written"),
    [pytest.param(tool, written, id=form) for form, tool, written in UNREPAIRED_BUT_REFUSED],
)
def test_a_form_with_no_single_meaning_is_left_for_validation_to_refuse(
    tool: str, written: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        CATALOG[tool].args.model_validate(repair_arguments(tool, written))


@pytest.mark.parametrize(
    "tool",
    [
        "submit_secret",
        "fill_card",
        "list_logins",
        "list_vault_items",
        "save_vault_item",
        "request_vault_item",
        "delete_vault_item",
        "request_link_payment",
        "confirm_payment",
    ],
)
def test_vault_secret_and_payment_tools_get_no_repair(tool: str) -> None:
    written = {
        "tab_id": TAB,
        "ref": "1:main:1",
        "target": "1:main:1",
        "name": f"browser.{tool}",
        "value": "x",
    }
    assert repair_arguments(tool, written) is written
    wrapped = {"name": f"browser.{tool}", "arguments": {"tabId": TAB}}
    assert repair_arguments(tool, wrapped) == wrapped


# -- run_script helpers -------------------------------------------------------------------

FN = {"__function": "() => done()"}

# (helper, its arguments as a script wrote them, the step: action, arguments, function, sleep)
SCRIPT_FORMS: list[tuple[str, list[Any], ScriptStep]] = [
    ("click", ["#go"], ScriptStep("click", {"target": "#go"})),
    (
        "click",
        [{"role": "button", "name": "Go"}],
        ScriptStep("click", {"target": {"role": "button", "name": "Go"}}),
    ),
    (
        "type",
        ["#q", "hello", {"mode": "replace"}],
        ScriptStep("type", {"target": "#q", "text": "hello", "mode": "replace"}),
    ),
    ("press", ["Enter"], ScriptStep("press", {"key": "Enter"})),
    ("press", ["Enter", "#q"], ScriptStep("press", {"key": "Enter", "target": "#q"})),
    ("scroll", ["down", 300], ScriptStep("scroll", {"direction": "down", "pixels": 300})),
    ("scroll", [{"target": "#list"}], ScriptStep("scroll", {"target": "#list"})),
    (
        "selectOption",
        ["#c", "Green"],
        ScriptStep("select_option", {"target": "#c", "value": "Green"}),
    ),
    ("setChecked", ["#n", False], ScriptStep("set_checked", {"target": "#n", "checked": False})),
    ("navigate", ["example.com"], ScriptStep("navigate", {"url": "example.com"})),
    ("snapshot", [], ScriptStep("snapshot", {})),
    ("evaluate", ["document.title"], ScriptStep("evaluate", {"expression": "document.title"})),
    (
        "evaluate",
        [{"__function": "(n) => n + 1"}, 41],
        ScriptStep("evaluate", {"expression": "((n) => n + 1)(41)"}),
    ),
    (
        "step",
        [{"action": "selectOption", "target": "#c", "value": "r", "tabId": "x"}],
        ScriptStep("select_option", {"target": "#c", "value": "r"}),
    ),
    (
        "step",
        [{"action": "set_checked", "target": "#n", "checked": True}],
        ScriptStep("set_checked", {"target": "#n", "checked": True}),
    ),
    ("step", [{"action": "sleep", "ms": 100}], ScriptStep("sleep", {}, sleep_ms=100)),
    ("sleep", [60_000], ScriptStep("sleep", {}, sleep_ms=25_000)),
    ("waitFor", [FN], ScriptStep("wait_for", {"timeout": 25_000}, function="() => done()")),
    ("waitFor", [FN, 5000], ScriptStep("wait_for", {"timeout": 5000}, function="() => done()")),
    (
        "waitFor",
        [FN, {"timeout": 90_000}],
        ScriptStep("wait_for", {"timeout": 25_000}, function="() => done()"),
    ),
    ("waitFor", ["text", "Done"], ScriptStep("wait_for", {"text": "Done"})),
    ("waitFor", ["Done", "text"], ScriptStep("wait_for", {"text": "Done"})),
    ("waitFor", [{"text": "Done"}], ScriptStep("wait_for", {"text": "Done"})),
    ("waitFor", [{"selector": "#d"}], ScriptStep("wait_for", {"target": {"selector": "#d"}})),
    (
        "waitFor",
        [{"selector": "#d", "timeout": 500}],
        ScriptStep("wait_for", {"target": {"selector": "#d"}, "timeout": 500}),
    ),
    ("waitFor", ["#d", "visible"], ScriptStep("wait_for", {"target": "#d"})),
    ("waitFor", ["#d", "attached"], ScriptStep("wait_for", {"target": "#d"})),
    ("waitFor", ["#d"], ScriptStep("wait_for", {"target": "#d"})),
    (
        "waitFor",
        [{"kind": "role", "role": "button", "name": "Go"}],
        ScriptStep("wait_for", {"target": {"kind": "role", "role": "button", "name": "Go"}}),
    ),
    ("waitFor", ["networkidle"], ScriptStep("wait_for", {"state": "networkidle"})),
    ("waitFor", [{"state": "networkidle"}], ScriptStep("wait_for", {"state": "networkidle"})),
    ("waitFor", [1500], ScriptStep("sleep", {}, sleep_ms=1500)),
]


@pytest.mark.parametrize(("helper", "args", "step"), SCRIPT_FORMS)
def test_a_helper_form_is_one_tool_step(helper: str, args: list[Any], step: ScriptStep) -> None:
    assert script_step(helper, args) == step


@pytest.mark.parametrize(("helper", "args", "step"), SCRIPT_FORMS)
def test_each_helper_step_passes_its_tools_model(
    helper: str, args: list[Any], step: ScriptStep
) -> None:
    made = script_step(helper, args)
    if made.sleep_ms is not None or made.function is not None:
        return  # a pause or a page function: the script's own steps, not a tool's
    repaired = repair_arguments(made.action, {**made.args, "tabId": TAB})
    CATALOG[made.action].args.model_validate(repaired)


@pytest.mark.parametrize(
    ("helper", "args"),
    [
        ("waitFor", [True]),
        ("waitFor", ["Done"]),
        ("waitFor", []),
        ("waitFor", [{"colour": "red"}]),
        ("step", [{"action": "fill_card"}]),
        ("step", ["click"]),
        ("click", ["#a", "#b"]),
        ("evaluate", [1]),
        ("sleep", ["soon"]),
        ("open", ["x"]),
    ],
)
def test_an_unknown_helper_form_is_refused_with_the_accepted_ones(
    helper: str, args: list[Any]
) -> None:
    with pytest.raises(ToolFailure) as refused:
        script_step(helper, args)
    assert refused.value.code == "invalidArguments"
