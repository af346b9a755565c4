"""What a misbehaving peer sends: arbitrary JSON and bytes, and valid-shaped messages with
extreme values (huge numbers, long strings, deep nesting, odd unicode, wrong types).

Shared by the Team API and view-channel fuzz tests.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

# A string that ``encode_hostile`` turns into that many nested arrays: deeper than
# ``json.dumps`` could write itself.
_DEEP = re.compile(r'"@@deep:(\d+)@@"')


def deep(depth: int) -> str:
    return f"@@deep:{depth}@@"


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
extreme = st.one_of(
    st.sampled_from([2**53 + 1, 2**63, -(2**63) - 1, 10**400, 1e308, -1e308, 5e-324, -0.0, 0, -1]),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from(["", " ", "\x00", "\u202e" * 40, "\U0001f9d1\u200d\U0001f4bb" * 30]),
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(max_size=4).map(lambda s: (s or "x") * 5000),
    st.integers(min_value=20, max_value=5000).map(deep),
    json_values,
)


def with_extremes(draw: st.DrawFn, body: Any) -> Any:
    """``body`` with some of its fields (or itself) replaced by extreme values."""
    if not isinstance(body, dict) or draw(st.integers(0, 9)) == 0:
        return draw(extreme) if draw(st.booleans()) else body
    changed = dict(body)
    for name in list(changed):
        if draw(st.integers(0, 2)) == 0:
            changed[name] = draw(extreme)
    if draw(st.integers(0, 4)) == 0:
        changed[draw(st.text(max_size=10))] = draw(extreme)
    return changed


def encode_hostile(message: Any) -> str:
    """JSON text of ``message``, each ``deep(n)`` string turned into n nested arrays."""
    return _DEEP.sub(lambda m: "[" * int(m[1]) + "]" * int(m[1]), json.dumps(message))


# Messages no host could read an id from: not JSON, not an object, an object without an id,
# or binary.
no_id_objects = st.dictionaries(
    st.text(max_size=8).filter(lambda key: key != "id"), json_values, max_size=4
)
unreadable: st.SearchStrategy[str | bytes] = st.one_of(
    st.text(min_size=1, max_size=200).filter(lambda text: '"id"' not in text),
    json_values.filter(lambda value: not isinstance(value, dict)).map(json.dumps),
    no_id_objects.map(json.dumps),
    st.integers(min_value=20, max_value=5000).map(lambda depth: "[" * depth + "]" * depth),
    st.binary(min_size=1, max_size=200),
)
