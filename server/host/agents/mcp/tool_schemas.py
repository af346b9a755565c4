"""An MCP server's tools checked and adapted for the model providers.

One adapted schema serves every provider: both Anthropic Messages and OpenAI-compatible
chat take a tool's name as ``[a-zA-Z0-9_-]{1,64}`` and its input as a JSON Schema object
at the top (OpenAI refuses ``anyOf``/``oneOf``/``allOf``/``enum``/``not`` there). Local
``$ref``s are inlined (``$defs`` go), so a provider that reads no references reads the
whole schema. A tool whose schema has a ``$ref`` cycle, a remote reference, or is too large
is refused: named in the server's status (``problems``) and not sent. A server offering
more than ``MAX_TOOLS`` tools is refused whole.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp import types

MAX_TOOLS = 1000
# The longest adapted schema, in characters of JSON, and the deepest nesting.
MAX_SCHEMA_CHARS = 60_000
MAX_DEPTH = 32
MAX_DESCRIPTION_CHARS = 1000
PREFIX = "mcp__"
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOP_REFUSED = ("anyOf", "oneOf", "allOf", "enum", "not")
_DROPPED = ("$schema", "$id", "$defs", "definitions")
_HINTS = (
    ("read_only_hint", "read-only"),
    ("destructive_hint", "destructive"),
    ("idempotent_hint", "idempotent"),
    ("open_world_hint", "reaches outside"),
)


class SchemaRefused(ValueError):
    """Why one tool's schema cannot be sent."""


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of a server as agents see it: ``full_name`` is ``mcp__<server>__<tool>``."""

    server: str
    name: str
    full_name: str
    description: str
    input_schema: dict[str, Any]
    hints: tuple[str, ...]


def full_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


def adapt_tools(server: str, tools: list[types.Tool]) -> tuple[list[McpTool], list[str]]:
    """The tools that can be offered, and a line for each that cannot."""
    kept: list[McpTool] = []
    problems: list[str] = []
    for tool in tools:
        name = full_name(server, tool.name)
        if not NAME_PATTERN.match(name):
            problems.append(
                f"{tool.name}: its name as {name} is not 1 to 64 letters, digits, _ or -"
            )
            continue
        try:
            schema = adapt_schema(tool.input_schema)
        except SchemaRefused as exc:
            problems.append(f"{tool.name}: {exc}")
            continue
        hints = _hints(tool.annotations)
        kept.append(McpTool(server, tool.name, name, _description(tool, hints), schema, hints))
    return kept, problems


def _hints(annotations: types.ToolAnnotations | None) -> tuple[str, ...]:
    if annotations is None:
        return ()
    return tuple(word for attr, word in _HINTS if getattr(annotations, attr, None) is True)


def _description(tool: types.Tool, hints: tuple[str, ...]) -> str:
    text = (tool.description or tool.title or tool.name).strip()
    if hints:
        # Shown to the model and to people; never read by the host's gating.
        text += f" (the server says: {', '.join(hints)})"
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return text


def adapt_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its local references inlined and what providers refuse removed;
    raises ``SchemaRefused``."""
    if not isinstance(schema, dict):
        raise SchemaRefused("its input schema is not an object")
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = schema.get(key)
        if isinstance(found, dict):
            defs.update({f"#/{key}/{name}": value for name, value in found.items()})
    adapted = _inline(schema, defs, (), 0, _Budget())
    if not isinstance(adapted, dict):
        raise SchemaRefused("its input schema is not an object")
    if adapted.get("type", "object") != "object":
        raise SchemaRefused("its input schema is not of type object")
    refused = [key for key in _TOP_REFUSED if key in adapted]
    if refused:
        raise SchemaRefused(f"its input schema has {refused[0]} at the top, which providers refuse")
    adapted["type"] = "object"
    adapted.setdefault("properties", {})
    if len(json.dumps(adapted)) > MAX_SCHEMA_CHARS:
        raise SchemaRefused(f"its input schema is longer than {MAX_SCHEMA_CHARS} characters")
    return adapted


class _Budget:
    """The characters of JSON inlined so far: a schema whose references repeat grows with
    each use, so the size is checked while it grows, not once it is whole."""

    def __init__(self) -> None:
        self.spent = 0

    def spend(self, chars: int) -> None:
        self.spent += chars
        if self.spent > MAX_SCHEMA_CHARS:
            raise SchemaRefused(f"its input schema is longer than {MAX_SCHEMA_CHARS} characters")

    def refund(self, chars: int) -> None:
        self.spent -= chars


def _inline(
    value: Any,
    defs: dict[str, Any],
    seen: tuple[str, ...],
    depth: int,
    budget: _Budget,
    names: bool = False,
) -> Any:
    """``value`` with references inlined; ``names``: a ``properties`` map, whose keys are
    names (a property called ``$id`` stays). Each value made is paid for in ``budget``: the
    length of its JSON without the separators between items, so never more than is sent."""
    if depth > MAX_DEPTH:
        raise SchemaRefused(f"its input schema nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        budget.spend(2 + 2 * max(len(value) - 1, 0))
        return [_inline(item, defs, seen, depth + 1, budget) for item in value]
    if not isinstance(value, dict):
        budget.spend(len(json.dumps(value)))
        return value
    ref = None if names else value.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            raise SchemaRefused(f"its input schema has a $ref cycle through {ref}")
        if ref not in defs:
            raise SchemaRefused(f"its input schema refers to {ref[:80]}, which it does not define")
        target = _inline(defs[ref], defs, (*seen, ref), depth + 1, budget)
        rest = {k: v for k, v in value.items() if k != "$ref"}
        if not rest:
            return target
        if not isinstance(target, dict):
            raise SchemaRefused(f"its input schema's {ref[:80]} is not a schema object")
        beside = _inline(rest, defs, seen, depth + 1, budget)
        # Both were paid for whole; what ``beside`` overrides of the target is not kept.
        budget.refund(2 + sum(_entry_chars(k, target[k]) for k in beside if k in target))
        return {**target, **beside}
    budget.spend(2)
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if names or key not in _DROPPED:
            budget.spend(len(json.dumps(key)) + 2)
            kept[key] = _inline(
                item, defs, seen, depth + 1, budget, names=key == "properties" and not names
            )
    return kept


def _entry_chars(key: str, value: Any) -> int:
    """What one entry of an inlined object was paid, at most: its key, ``: `` and its value."""
    return len(json.dumps(key)) + 2 + len(json.dumps(value))
