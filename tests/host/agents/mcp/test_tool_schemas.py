"""Tools adapted for the providers: references inlined, what a provider would refuse
named in the status and not sent, and the server's hints shown but never trusted."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types

from server.host.agents.mcp.tool_schemas import SchemaRefused, adapt_schema, adapt_tools


def tool(name: str, schema: dict[str, Any], **extra: Any) -> types.Tool:
    return types.Tool(name=name, input_schema=schema, **extra)


def test_local_references_are_inlined_and_definitions_dropped() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "issue": {"$ref": "#/$defs/Issue"},
            # A property may be called like a keyword: it stays.
            "$id": {"type": "string"},
        },
        "$defs": {"Issue": {"type": "object", "properties": {"title": {"type": "string"}}}},
    }
    assert adapt_schema(schema) == {
        "type": "object",
        "properties": {
            "issue": {"type": "object", "properties": {"title": {"type": "string"}}},
            "$id": {"type": "string"},
        },
    }


def test_an_empty_schema_becomes_an_object_without_properties() -> None:
    assert adapt_schema({}) == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {
                "type": "object",
                "properties": {"n": {"$ref": "#/$defs/N"}},
                "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
            },
            "a $ref cycle through #/$defs/N",
        ),
        (
            {"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}},
            "refers to https://example.com/x.json, which it does not define",
        ),
        ({"type": "array"}, "not of type object"),
        ({"anyOf": [{"type": "object"}]}, "anyOf at the top"),
        (
            {
                "type": "object",
                "properties": {"s": {"type": "string", "description": "x" * 70_000}},
            },
            "longer than 60000 characters",
        ),
    ],
)
def test_a_schema_a_provider_would_refuse_is_refused(schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(SchemaRefused, match=reason.replace("$", r"\$")):
        adapt_schema(schema)


def test_deep_nesting_is_refused() -> None:
    schema: dict[str, Any] = {"type": "object"}
    inner = schema
    for _ in range(40):
        inner["properties"] = {"x": {"type": "object"}}
        inner = inner["properties"]["x"]
    with pytest.raises(SchemaRefused, match="deeper than 32"):
        adapt_schema(schema)


def test_tools_are_named_for_agents_and_refused_ones_are_reported() -> None:
    tools = [
        tool("search", {"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
        tool("x" * 60, {"type": "object"}),
        tool("loop", {"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}),
    ]
    kept, problems = adapt_tools("wiki", tools)
    assert [t.full_name for t in kept] == ["mcp__wiki__search"]
    assert kept[0].hints == ("read-only",)
    assert kept[0].description == "search (the server says: read-only)"
    assert problems == [
        f"{'x' * 60}: its name as mcp__wiki__{'x' * 60} is not 1 to 64 letters, digits, _ or -",
        "loop: its input schema has a $ref cycle through #/$defs/A",
    ]


def level_schema(levels: int, fan: int) -> dict[str, Any]:
    """A small schema whose every level refers ``fan`` times to the next: inlined whole it
    is ``fan ** levels`` times as long."""
    defs: dict[str, Any] = {f"d{levels - 1}": {"type": "string"}}
    for level in range(levels - 1):
        next_ref = {"$ref": f"#/$defs/d{level + 1}"}
        defs[f"d{level}"] = {
            "type": "object",
            "properties": {f"p{n}": next_ref for n in range(fan)},
        }
    return {"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def test_references_repeated_past_the_longest_schema_are_refused_as_they_grow() -> None:
    # Inlined whole, this 2 KB schema would be billions of characters: refused long before.
    with pytest.raises(SchemaRefused, match="longer than 60000 characters"):
        adapt_schema(level_schema(10, 8))
    # Repeated references within the limit are inlined, each use whole.
    adapted = adapt_schema(level_schema(6, 2))
    leaf = adapted["properties"]["a"]
    for _ in range(5):
        assert set(leaf["properties"]) == {"p0", "p1"}
        leaf = leaf["properties"]["p1"]
    assert leaf == {"type": "string"}
