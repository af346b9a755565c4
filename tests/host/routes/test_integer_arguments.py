"""Every whole number a Team API route takes is bounded in its model.

The router refuses arguments the model refuses (``invalidArgument``) before a handler
runs; a number the model lets through unbounded reaches SQLite or a file offset and
fails there as ``internal``. So this walks every route's argument model, nested models
and lists included, and sends each integer field 2^63 and -1.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from server.common.wire import invalid_argument_from
from server.host.routes.tables import ROUTE_TABLES

# Where a value goes: field aliases, and 0 for the first item of a list.
Path = tuple[str | int, ...]


def integer_fields(
    model: type[BaseModel], at: Path = (), seen: frozenset[type] = frozenset()
) -> list[Path]:
    """The path of every field of ``model`` (and of the models it holds) that takes an int."""
    found: list[Path] = []

    def walk(annotation: Any, path: Path) -> None:
        origin = typing.get_origin(annotation)
        if annotation is int:
            found.append(path)
        elif origin is typing.Annotated:
            walk(typing.get_args(annotation)[0], path)
        elif origin in (typing.Union, types.UnionType):
            for member in typing.get_args(annotation):
                walk(member, path)
        elif origin in (list, tuple, set, frozenset):
            for member in typing.get_args(annotation):
                if member is not Ellipsis:
                    walk(member, (*path, 0))
        elif (
            isinstance(annotation, type)
            and issubclass(annotation, BaseModel)
            and annotation not in seen
        ):
            found.extend(integer_fields(annotation, path, seen | {annotation}))

    for name, info in model.model_fields.items():
        walk(info.annotation, (*at, info.alias or name))
    return found


def placed(path: Path, value: int) -> Any:
    """``value`` inside the dicts and lists that ``path`` walks through."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    return [placed(rest, value)] if isinstance(head, int) else {head: placed(rest, value)}


CASES = [
    pytest.param(route.args, path, id=f"{route.name}:{'.'.join(map(str, path))}")
    for table in ROUTE_TABLES
    for route in table.routes
    for path in integer_fields(route.args)
]


def test_the_walk_finds_the_numbers_it_must() -> None:
    ids = {case.id for case in CASES}
    assert {"vault-v1/list:offset", "vault-v1/list_names:offset"} <= ids
    assert "workspace-v1/download:offset" in ids


@pytest.mark.parametrize("value", [2**63, -1], ids=["2^63", "-1"])
@pytest.mark.parametrize(("model", "path"), CASES)
def test_every_integer_argument_is_bounded(model: type[BaseModel], path: Path, value: int) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate(placed(path, value))
    on_the_field = [
        e
        for e in refused.value.errors(include_url=False)
        if e["type"] != "missing" and tuple(e["loc"][: len(path)]) == path
    ]
    assert on_the_field, f"{model.__name__} takes {value} at {path}"
    # And it becomes the one stable code the router answers for bad arguments.
    assert invalid_argument_from(refused.value).code == "invalidArgument"
