"""Rewriting the argument forms agents write into the forms the tools advertise.

A refused call costs an agent a whole turn, and agents keep writing the same few
forms from other libraries and from the snapshot text itself. Before a tool's
model reads the arguments, ``repair_arguments`` rewrites those forms. The
advertised schemas stay as they are; a form that could mean two things stays a
refusal; and the vault, secret and payment tools are never repaired, because
their arguments must be exactly what the agent meant.

Each form is one entry of ``FORMS``: its name, the tools it applies to, and the
function that rewrites it. The entries run in order on a copy of the arguments.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from server.host.tools.results import ToolFailure

# Tools whose arguments must reach them exactly as written.
NEVER_REPAIRED = frozenset(
    {
        "submit_secret",
        "fill_card",
        "list_logins",
        "list_vault_items",
        "save_vault_item",
        "request_vault_item",
        "delete_vault_item",
        "request_link_payment",
    }
)
_NEVER_REPAIRED_WORDS = ("secret", "vault", "payment", "card", "login")

# Tools with a ``target`` field (the action tools and wait_for).
TARGET_TOOLS = frozenset(
    {"click", "type", "press", "hover", "scroll", "select_option", "set_checked", "wait_for"}
)

_REF = r"\d+:[A-Za-z0-9]+:\d+"
_REF_ONLY = re.compile(rf"({_REF})")
# A whole snapshot line: the ref, then the role and name (and states) as the snapshot shows them.
_SNAPSHOT_LINE = re.compile(rf"(?:-\s*)?({_REF})\s+[a-z].*", re.DOTALL)
# A role line: role "name" [states], as a snapshot line without its ref.
_ROLE_LINE = re.compile(r'([a-z]+)\s+("(?:[^"\\]|\\.)*")(?:\s+\[[^\]]*\])?')
_CSS_PREFIX = re.compile(r"css\s+(.+)", re.DOTALL)
ROLES = frozenset(
    {
        "button",
        "cell",
        "checkbox",
        "columnheader",
        "combobox",
        "dialog",
        "gridcell",
        "heading",
        "img",
        "link",
        "listbox",
        "listitem",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "radio",
        "row",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
        "treeitem",
    }
)
# Load states of other automation libraries, as wait_for names them.
WAIT_STATES = {
    "networkidle": "dom-quiet",
    "networkidle0": "dom-quiet",
    "networkidle2": "dom-quiet",
    "idle": "dom-quiet",
    "quiet": "dom-quiet",
    "complete": "load",
    "interactive": "domcontentloaded",
}
# States that a target wait already implies: it waits for the element to show.
TARGET_WAIT_STATES = frozenset({"visible", "attached"})


def _ambiguous(message: str) -> ToolFailure:
    return ToolFailure("ambiguousArguments", message)


# -- the forms -------------------------------------------------------------------------


def _unwrap_call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``{"name": "<namespace>.<tool>", "arguments": {...}}`` is the call written out whole."""
    if set(args) != {"name", "arguments"} or not isinstance(args["name"], str):
        return args
    named = args["name"].rsplit(".", 1)[-1]
    if named != tool:
        raise ToolFailure(
            "toolMismatch", f"the arguments name the tool {args['name']!r}, but {tool} was called"
        )
    inner = args["arguments"]
    if isinstance(inner, str):
        try:
            inner = json.loads(inner)
        except ValueError:
            return args
    if not isinstance(inner, dict):
        return args
    if set(inner) == {"name", "arguments"}:
        # Unwrapped once, it would still be a wrapper: what a person approves and what
        # runs must be one set of arguments, and a repair must give the same twice.
        raise _ambiguous("the call is written out whole twice; give its arguments once")
    return inner


def _camel_case_fields(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``tab_id`` is ``tabId``, unless the call also gives ``tabId``."""
    repaired: dict[str, Any] = {}
    for key, value in args.items():
        camel = to_camel(key) if "_" in key.strip("_") else key
        if camel != key and camel in args:
            raise _ambiguous(f"the call gives both {key} and {camel}; give {camel} only")
        repaired[camel] = value
    return repaired


def _open_takes_no_tab(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``open`` always opens a new tab, so the page in the named tab stays."""
    args.pop("tabId", None)
    return args


def _top_level_ref(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``{"ref": "3:main:12"}`` on an action tool is its target."""
    if "ref" not in args:
        return args
    ref = args.pop("ref")
    if "target" in args and args["target"] != ref:
        raise _ambiguous("the call gives both ref and target; give target only")
    args["target"] = ref
    return args


def _target_forms(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A target written as a string, or as an object without ``kind`` or ``revision``."""
    if "target" in args:
        args["target"] = repair_target(args["target"])
    return args


def _type_mode(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``replace: true`` or ``clear: true`` is ``mode: "replace"``; ``false`` is ``"append"``."""
    flags = {key: args[key] for key in ("replace", "clear") if key in args}
    if not flags or not all(isinstance(v, bool) for v in flags.values()):
        return args
    modes = {"replace" if value else "append" for value in flags.values()}
    if "mode" in args:
        modes.add(args["mode"])
    if len(modes) > 1:
        raise _ambiguous(f"{', '.join(sorted(flags))} and mode disagree; give mode only")
    for key in flags:
        del args[key]
    args["mode"] = modes.pop()
    return args


def _wait_for_forms(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """wait_for without ``snapshot`` or a ``condition`` that only names another field, and
    with the load states other libraries use."""
    args.pop("snapshot", None)
    condition = args.get("condition")
    if isinstance(condition, str) and condition != "condition" and condition in args:
        del args["condition"]
    state = args.get("state")
    if isinstance(state, str):
        key = state.strip().lower().replace("_", "").replace("-", "")
        if key in WAIT_STATES:
            args["state"] = WAIT_STATES[key]
        elif key in TARGET_WAIT_STATES and args.get("target") is not None:
            del args["state"]
    return args


def _fill_fields_forms(_tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Each field's ``value`` is its ``text``; a missing ``revision`` comes from the refs when
    they all name the same one."""
    fields = args.get("fields")
    if not isinstance(fields, list):
        return args
    repaired = []
    for entry in fields:
        if isinstance(entry, dict) and "value" in entry:
            entry = dict(entry)
            value = entry.pop("value")
            if "text" in entry and entry["text"] != value:
                raise _ambiguous("a field gives both value and text; give text only")
            entry["text"] = value
        repaired.append(entry)
    args["fields"] = repaired
    if "revision" not in args:
        revisions = {_ref_revision(e.get("ref")) for e in repaired if isinstance(e, dict)}
        if len(revisions) == 1 and None not in revisions:
            args["revision"] = revisions.pop()
    return args


@dataclass(frozen=True)
class Form:
    """One argument form agents write, and how it is rewritten."""

    name: str
    # The tools it applies to; None for every tool that is repaired at all.
    tools: frozenset[str] | None
    rewrite: Callable[[str, dict[str, Any]], dict[str, Any]]


FORMS: tuple[Form, ...] = (
    Form("whole call with name and arguments", None, _unwrap_call),
    Form("snake_case field names", None, _camel_case_fields),
    Form("open with a tabId", frozenset({"open"}), _open_takes_no_tab),
    Form("top-level ref", TARGET_TOOLS, _top_level_ref),
    Form("target as a string or without kind", TARGET_TOOLS, _target_forms),
    Form("type with replace or clear", frozenset({"type"}), _type_mode),
    Form("wait_for states and extra fields", frozenset({"wait_for"}), _wait_for_forms),
    Form("fill_fields value and revision", frozenset({"fill_fields"}), _fill_fields_forms),
)


# -- targets ---------------------------------------------------------------------------


def _ref_revision(ref: Any) -> int | None:
    if not isinstance(ref, str) or _REF_ONLY.fullmatch(ref.strip()) is None:
        return None
    return int(ref.strip().split(":", 1)[0])


def _ref_of_line(text: str) -> str | None:
    """The ref of a bare ref or of a whole snapshot line."""
    stripped = text.strip()
    if _REF_ONLY.fullmatch(stripped):
        return stripped
    line = _SNAPSHOT_LINE.fullmatch(stripped)
    return line.group(1) if line else None


def _target_of_string(text: str) -> dict[str, Any] | str:
    ref = _ref_of_line(text)
    if ref is not None:
        return {"kind": "ref", "ref": ref, "revision": _ref_revision(ref)}
    stripped = text.strip()
    role = _ROLE_LINE.fullmatch(stripped)
    if role is not None and role.group(1) in ROLES:
        try:
            name = json.loads(role.group(2))
        except ValueError:
            name = None
        if isinstance(name, str):
            return {"kind": "role", "role": role.group(1), "name": name}
    css = _CSS_PREFIX.fullmatch(stripped)
    if css is not None:
        return {"kind": "css", "selector": css.group(1).strip()}
    if not stripped:
        return text
    return {"kind": "css", "selector": stripped}


_KIND_FIELDS = (
    ("ref", ("ref",)),
    ("css", ("selector",)),
    ("css", ("css",)),
    ("role", ("role",)),
    ("text", ("text",)),
    ("point", ("x", "y")),
)


def repair_target(target: Any) -> Any:
    """A target in the advertised form, when it was written in one of the accepted others."""
    if isinstance(target, str):
        return _target_of_string(target)
    if not isinstance(target, dict):
        return target
    repaired = dict(target)
    if "kind" not in repaired:
        kinds = {kind for kind, keys in _KIND_FIELDS if all(k in repaired for k in keys)}
        if len(kinds) > 1:
            raise ToolFailure(
                "ambiguousTarget",
                f"the target has fields of several kinds ({', '.join(sorted(kinds))}); "
                "give one: a ref, a selector, a role and name, a text, or x and y",
            )
        if kinds:
            repaired["kind"] = kinds.pop()
    if repaired.get("kind") == "css" and "css" in repaired:
        css = repaired.pop("css")
        if "selector" in repaired and repaired["selector"] != css:
            raise ToolFailure("ambiguousTarget", "the target gives both css and selector")
        repaired["selector"] = css
    if repaired.get("kind") == "ref" and isinstance(repaired.get("ref"), str):
        ref = _ref_of_line(repaired["ref"])
        if ref is not None:
            repaired["ref"] = ref
            if repaired.get("revision") is None:
                repaired["revision"] = _ref_revision(ref)
    return repaired


# -- entry point -----------------------------------------------------------------------


def is_never_repaired(tool: str) -> bool:
    """The vault, secret and payment tools take their arguments exactly as written."""
    return tool in NEVER_REPAIRED or any(word in tool for word in _NEVER_REPAIRED_WORDS)


def repair_arguments(tool_name: str, raw_args: dict[str, Any]) -> dict[str, Any]:
    """``raw_args`` with the accepted forms rewritten; raises ``ToolFailure`` for a form that
    could mean two things. ``raw_args`` itself is never changed."""
    if is_never_repaired(tool_name):
        return raw_args
    args = copy.deepcopy(raw_args)
    for form in FORMS:
        if form.tools is None or tool_name in form.tools:
            args = form.rewrite(tool_name, args)
    return args


# -- run_script helpers ----------------------------------------------------------------

# The tools a run_script step may run, by tool name: the one list (run_script's table of
# tools and the helpers below follow it).
SCRIPT_TOOLS = (
    "navigate",
    "click",
    "type",
    "press",
    "hover",
    "scroll",
    "select_option",
    "set_checked",
    "wait_for",
    "evaluate",
    "snapshot",
)
# A helper of run_script (the tool's name in camelCase) and the tool its step runs.
HELPER_TOOLS = {to_camel(tool): tool for tool in SCRIPT_TOOLS}
# The tools a ``step({action})`` may name, by their helper name or their tool name.
STEP_ACTIONS = {**HELPER_TOOLS, **{tool: tool for tool in HELPER_TOOLS.values()}}
# The longest a sleep or a page-function wait of a script may take.
LONGEST_SCRIPT_WAIT_MS = 25_000

WAIT_FOR_FORMS = (
    "waitFor(pageFunction), waitFor(fn, 5000), waitFor(fn, {timeout}), "
    'waitFor("text", "Done"), waitFor("Done", "text"), waitFor({text}), '
    'waitFor({selector}), waitFor("#done", "visible"), waitFor(role("button", {name})), '
    'waitFor({state: "load" | "domcontentloaded" | "networkidle"}), waitFor("networkidle"), '
    "waitFor(ms)"
)


@dataclass(frozen=True)
class ScriptStep:
    """One step of a script: the tool it runs with its arguments (no ``tabId`` yet), or a
    page function to poll (``function``) or a pause (``sleep_ms``)."""

    action: str
    args: dict[str, Any]
    function: str | None = None
    sleep_ms: int | None = None


def _function_source(value: Any) -> str | None:
    if isinstance(value, dict) and set(value) == {"__function"}:
        source = value["__function"]
        return source if isinstance(source, str) else None
    return None


def _options(value: Any, helper: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolFailure("invalidArguments", f"{helper}: the options must be an object")
    return dict(value)


def _timeout_of(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _wait_step(args: list[Any]) -> ScriptStep:
    """The forms ``waitFor`` takes (see ``WAIT_FOR_FORMS``)."""
    unknown = ToolFailure("invalidArguments", f"waitFor takes one of: {WAIT_FOR_FORMS}")
    if not args or len(args) > 2:
        raise unknown
    first, second = args[0], args[1] if len(args) == 2 else None
    timeout = _timeout_of(second)
    options = {} if timeout is not None or isinstance(second, str) else _options(second, "waitFor")
    if "timeout" in options:
        timeout = _timeout_of(options.pop("timeout"))
    state = options.pop("state", None)
    fields: dict[str, Any] = {}
    if (source := _function_source(first)) is not None:
        wait = min(timeout or LONGEST_SCRIPT_WAIT_MS, LONGEST_SCRIPT_WAIT_MS)
        return ScriptStep("wait_for", {"timeout": wait}, function=source)
    if _timeout_of(first) is not None and second is None:
        return ScriptStep("sleep", {}, sleep_ms=_sleep_ms(first))
    if isinstance(first, str) and isinstance(second, str):
        kinds = {first.strip().lower(), second.strip().lower()}
        if "text" in kinds and len(kinds) == 2:
            fields["text"] = second if first.strip().lower() == "text" else first
        elif second.strip().lower() in TARGET_WAIT_STATES:
            fields["target"] = first
        else:
            raise unknown
    elif isinstance(first, str):
        key = first.strip().lower().replace("_", "").replace("-", "")
        if key in WAIT_STATES or key in ("load", "domcontentloaded", "domquiet"):
            fields["state"] = first
        elif first.strip()[:1] in ("#", ".", "["):
            fields["target"] = first
        else:
            raise unknown
    elif isinstance(first, dict):
        given = dict(first)
        if "timeout" in given:
            timeout = _timeout_of(given.pop("timeout"))
        if state is None:
            state = given.pop("state", None)
        if "kind" in given or set(given) & {"ref", "selector", "css", "role", "x"}:
            fields["target"] = given
        elif set(given) == {"text"}:
            fields["text"] = given["text"]
        elif given:
            raise unknown
    else:
        raise unknown
    if state is not None:
        fields["state"] = state
    if timeout is not None:
        fields["timeout"] = timeout
    return ScriptStep("wait_for", fields)


def _sleep_ms(value: Any) -> int:
    ms = _timeout_of(value)
    if ms is None or ms < 0:
        raise ToolFailure("invalidArguments", "sleep takes a number of milliseconds")
    return min(ms, LONGEST_SCRIPT_WAIT_MS)


def _evaluate_step(args: list[Any]) -> ScriptStep:
    if not args or len(args) > 2:
        raise ToolFailure("invalidArguments", "evaluate takes an expression or a function")
    source = _function_source(args[0])
    if source is not None:
        argument = json.dumps(args[1] if len(args) == 2 else None)
        expression = f"({source})({argument})"
    elif isinstance(args[0], str) and len(args) == 1:
        expression = args[0]
    else:
        raise ToolFailure("invalidArguments", "evaluate takes an expression or a function")
    return ScriptStep("evaluate", {"expression": expression})


def _positional(helper: str, args: list[Any]) -> dict[str, Any]:
    """The fields of an action helper written with positional arguments."""
    if len(args) == 1 and isinstance(args[0], dict) and helper in ("press", "scroll"):
        return dict(args[0])
    names: dict[str, tuple[str, ...]] = {
        "navigate": ("url",),
        "click": ("target",),
        "hover": ("target",),
        "type": ("target", "text"),
        "press": ("key", "target"),
        "scroll": ("direction", "pixels"),
        "selectOption": ("target", "value"),
        "setChecked": ("target", "checked"),
        "snapshot": (),
    }
    wanted = names[helper]
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if len(args) == len(wanted) + 1 and (args[-1] is None or isinstance(args[-1], dict)):
        extra = _options(args[-1], helper)
        args = args[:-1]
    if len(args) > len(wanted):
        raise ToolFailure(
            "invalidArguments", f"{helper} takes ({', '.join(wanted)}) and an options object"
        )
    for name, value in zip(wanted, args, strict=False):
        if value is not None:
            fields[name] = value
    return {**extra, **fields}


def script_step(helper: str, args: list[Any]) -> ScriptStep:
    """The step a run_script helper call stands for, in the tools' own argument forms.

    The helpers take the forms models write from other libraries (positional
    arguments, ``step({action, ...fields})``, the ``waitFor`` forms of
    ``WAIT_FOR_FORMS``, ``sleep(ms)``); an unknown form is refused with the accepted
    ones. The tool's own repair (``repair_arguments``) runs on the result as on any call.
    """
    if helper == "step":
        if len(args) != 1 or not isinstance(args[0], dict):
            raise ToolFailure("invalidArguments", "step takes one object: {action, ...fields}")
        fields = dict(args[0])
        action = fields.pop("action", None)
        if action == "sleep":
            return ScriptStep("sleep", {}, sleep_ms=_sleep_ms(fields.get("ms")))
        if not isinstance(action, str) or action not in STEP_ACTIONS:
            raise ToolFailure(
                "invalidArguments",
                f"step's action must be one of {', '.join(sorted(HELPER_TOOLS))} or sleep",
            )
        fields.pop("tabId", None)
        fields.pop("tab_id", None)
        return ScriptStep(STEP_ACTIONS[action], fields)
    if helper == "sleep":
        if len(args) != 1:
            raise ToolFailure("invalidArguments", "sleep takes a number of milliseconds")
        return ScriptStep("sleep", {}, sleep_ms=_sleep_ms(args[0]))
    if helper == "waitFor":
        return _wait_step(args)
    if helper == "evaluate":
        return _evaluate_step(args)
    if helper not in HELPER_TOOLS:
        raise ToolFailure("invalidArguments", f"there is no helper {helper}")
    return ScriptStep(HELPER_TOOLS[helper], _positional(helper, args))
