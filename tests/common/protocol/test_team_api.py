"""Reading the id of a team-api request the host could not decode, to answer it."""

from __future__ import annotations

import json

import pytest

from server.common.errors import InvalidArgument
from server.common.protocol.team_api import decode_team_api_request, request_id_of

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"id": 7, "route": 5}', 7),
        ('{"id": "a-1", "args": []}', "a-1"),
        (f'{{"id": 3, "route": "x", "args": {{"deep": {DEEP}}}}}', 3),
        (f'{{"args": {DEEP}, "id": "after"}}', "after"),
        ('{"args": {"id": 9}, "route": "x"}', None),  # an id inside args is not the request's
        ('{"args": "{\\"id\\": 9}", "route": "x"}', None),
        ('{"id": 1, "id": 2}', 2),  # the last, as a parser keeps
        ('{"note": "a ] and a } in a string", "x": ["]", "\\"]"], "id": 4}', 4),
        (b'{"id": 5, "route": true}', 5),
        ('  {  "id" : 6 , "route" : null }  ', 6),
        ('{"id": true}', None),
        ('{"id": -1}', None),
        (f'{{"id": {2**53 + 1}}}', None),
        ('{"id": "' + "x" * 65 + '"}', None),
        ('{"id": "\\ud800"}', None),  # a lone surrogate: no answer can carry it
        ('{"id": "\\ud83d\\ude00"}', "\U0001f600"),  # a pair is one character
        ('{"id": [1]}', None),
        ('{"id": 1, "args": [}', None),
        ('{"id": 1', None),
        ('{"id": 1} trailing', None),
        ('{"id" 1}', None),
        ('{"id": 1 "route": 2}', None),
        ("[1, 2]", None),
        ("", None),
        (b"\xff\xfe{", None),
        (DEEP, None),
    ],
)
def test_the_id_is_read_from_the_top_level_only(raw: str | bytes, expected: object) -> None:
    assert request_id_of(raw) == expected


def test_a_request_nested_too_deep_to_decode_still_has_its_id() -> None:
    raw = json.dumps({"id": 11, "route": "capabilities", "args": {"v": "@"}}).replace('"@"', DEEP)
    with pytest.raises(InvalidArgument):
        decode_team_api_request(raw)
    assert request_id_of(raw) == 11
