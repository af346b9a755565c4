"""What a tool answers: a refusal (``ToolFailure``) and the cap every result is kept under.

A refusal is a ``ToolFailure`` that ``call_tool`` turns into ``{"error": {"code", "message"}}``,
so the agent runtime never sees an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from server.common.errors import CrewhostError

MAX_RESULT_CHARS = 20_000
_CUT_MARK = "\n[... cut: the result was longer than 20,000 characters]"


class ToolFailure(CrewhostError):
    """A refusal or failure a tool reports to the agent; ``extra`` joins the error object.

    One of the error hierarchy's own: a tool result renders it, like any other
    ``CrewhostError`` a service raises, with ``to_wire``.
    """

    status = 422
    code = "toolFailed"

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message, code=code)
        self.extra = extra

    def to_wire(self) -> dict[str, Any]:
        return {**super().to_wire(), **self.extra}

    def to_result(self) -> dict[str, Any]:
        return {"error": self.to_wire()}


# Where a value sits inside a result: the keys and indexes that lead to it.
_Path = tuple[str | int, ...]
# A string, list or dict inside a result: its path, itself and its serialized length.
_Part = tuple[_Path, Any, int]
# What a cut can shorten; a result read back from JSON holds these types exactly.
_CUTTABLE = frozenset({str, list, dict})
# A string shorter than this is never cut: a name or an address is kept whole or dropped.
_SHORTEST_CUT = len(_CUT_MARK) + 64


def serialize_result(result: dict[str, Any]) -> str:
    """A tool result as the text the model reads: the one place a result becomes text.

    JSON with non-ASCII characters written as themselves (``ensure_ascii=False``: a CJK
    or accented character is one character, not a six-character ``\\uXXXX`` escape),
    the separators ``", "`` and ``": "``, and ``str()`` of a value JSON has no form for.
    ``cap_result`` measures ``MAX_RESULT_CHARS`` on this string, in Python characters
    (code points), and the agent runtime puts this string unchanged in the call's
    ``ToolResult``. Both provider adapters send that string as the tool result's text
    (the OpenAI one puts ``Error: `` before a failed call's); the HTTP body carrying it is
    JSON again and may escape it, but that is transport, undone before the model reads it.
    """
    return _json(result)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), default=str)


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


def _parts(result: dict[str, Any]) -> list[_Part]:
    """Every string, list and dict inside ``result`` (not ``result`` itself) with its path
    and serialized length, in document order.

    ``result`` holds only what JSON does (it was read back from JSON), so a container's
    length is the sum of its parts' and its punctuation's, counted once, bottom up.
    """
    found: list[_Part] = []

    def walk(value: Any, path: _Path) -> int:
        if isinstance(value, str):
            length = len(_json(value))
            if path:
                found.append((path, value, length))
            return length
        if not isinstance(value, dict | list):
            return len(_json(value))
        index = len(found)
        found.append((path, value, 0))  # its length is known once its parts' are
        if isinstance(value, dict):
            inner = [
                len(_json(key)) + 2 + walk(child, (*path, key)) for key, child in value.items()
            ]
        elif not _CUTTABLE.isdisjoint(map(type, value)):
            inner = [walk(child, (*path, n)) for n, child in enumerate(value)]
        else:  # numbers, booleans and nulls only: nothing inside to cut, measured at once
            found[index] = (path, value, len(_json(value)))
            return found[index][2]
        length = 2 + sum(inner) + 2 * max(0, len(inner) - 1)
        found[index] = (path, value, length)
        return length

    walk(result, ())
    return found[1:]


def _largest(parts: list[_Part]) -> _Part:
    """Of ``parts`` (not empty), the one that serializes longest; of equals the last, so
    earlier content stays."""
    best = parts[0]
    for part in parts:
        if part[2] >= best[2]:
            best = part
    return best


def _replace(result: dict[str, Any], path: _Path, new: Any) -> None:
    value: Any = result
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _longest_fitting(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in ``low..high`` with ``fits(n)``, given ``fits(low)`` and that ``fits``
    stays true below any n where it holds."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _cut_text(result: dict[str, Any], parts: list[_Part], size: int, *, whole_excess: bool) -> bool:
    """Shortens the longest string, keeping the longest prefix whose serialized form fits.

    With ``whole_excess`` only when that one cut brings ``result`` within the cap;
    otherwise the string is cut to the mark alone. False when no string qualifies.
    """
    texts = [part for part in parts if isinstance(part[1], str) and len(part[1]) > _SHORTEST_CUT]
    if not texts:
        return False
    path, text, cost = _largest(texts)
    room = MAX_RESULT_CHARS - (size - cost)  # what the string's own JSON may take
    mark_cost = len(_json(_CUT_MARK))
    if whole_excess and mark_cost > room:
        return False
    # Each kept character costs at least one, so no more than ``room`` can be kept.
    keep = _longest_fitting(
        lambda n: len(_json(text[:n])) + mark_cost - 2 <= room, 0, min(len(text), room)
    )
    if 0 < keep < len(text) and "\ud800" <= text[keep - 1] <= "\udbff":
        keep -= 1  # not between the halves of a surrogate pair
    _replace(result, path, text[:keep] + _CUT_MARK)
    return True


def _cut_items(result: dict[str, Any], parts: list[_Part], size: int, *, least: int) -> bool:
    """Drops the last items of a list (or entries of a dict below the top) with at least
    ``least`` items, keeping as many as fit.

    A container that can take the whole excess is chosen first, and then one item more
    than fits is kept, so the next cut can shorten that item's text rather than lose it.
    False when no container qualifies.
    """
    containers = [
        part for part in parts if isinstance(part[1], list | dict) and len(part[1]) >= least
    ]
    if not containers:
        return False
    # Best the last list (in document order) that can take the whole excess, so what is
    # dropped is the end of what there is; then such a dict; then the largest container.
    enough = [part for part in containers if size - part[2] + 2 <= MAX_RESULT_CHARS]
    lists = [part for part in enough if isinstance(part[1], list)]
    path, container, cost = (lists or enough)[-1] if enough else _largest(containers)
    items: list[Any] = list(container.items()) if isinstance(container, dict) else container

    def rebuilt(count: int) -> Any:
        return dict(items[:count]) if isinstance(container, dict) else items[:count]

    room = MAX_RESULT_CHARS - (size - cost)
    fitting = _longest_fitting(lambda n: len(_json(rebuilt(n))) <= room, 0, len(items) - 1)
    _replace(result, path, rebuilt(fitting + 1 if fitting + 1 < len(items) else fitting))
    return True


def cap_result(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as at most ``MAX_RESULT_CHARS`` characters of ``serialize_result``, with
    ``truncated: True`` when cut.

    The cut is measured, not estimated: the longest string keeps the longest prefix whose
    JSON (escapes included) fits, followed by a mark saying it was cut; a list keeps as
    many items as fit. What stays is still well-formed and says it is incomplete.
    """
    text = serialize_result(result)
    if len(text) <= MAX_RESULT_CHARS:
        return result
    capped: dict[str, Any] = json.loads(text)
    capped["truncated"] = True
    # Each cut shortens a string to a prefix or drops items, so the loop ends; the bound is
    # a guard against a result shaped to make it slow.
    for _ in range(1_000):
        size = len(serialize_result(capped))
        if size <= MAX_RESULT_CHARS:
            return capped
        parts = _parts(capped)
        cut = (
            _cut_text(capped, parts, size, whole_excess=True)
            or _cut_items(capped, parts, size, least=2)
            or _cut_text(capped, parts, size, whole_excess=False)
            or _cut_items(capped, parts, size, least=1)
        )
        if not cut:
            break
    return {
        "error": {"code": "resultTooLarge", "message": "the result could not be cut to size"},
        "truncated": True,
    }
