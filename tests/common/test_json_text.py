"""Provider JSON with half a UTF-16 pair escaped alone: read as U+FFFD, pairs kept."""

from __future__ import annotations

import json

import pytest

from server.common.json_text import read_json


def test_a_lone_half_is_a_replacement_character_and_a_whole_pair_is_kept() -> None:
    text = '{"q\\ud83d": ["size \\ud83d?", "\\udc00", "pair \\ud83d\\ude00", {"n": 1}]}'
    assert read_json(text) == {"q\ufffd": ["size \ufffd?", "\ufffd", "pair 😀", {"n": 1}]}
    json.dumps(read_json(text), ensure_ascii=False).encode()  # every string is UTF-8 text


def test_text_without_escaped_halves_reads_as_json_does() -> None:
    text = '{"a": "\\u00e9\\\\ud83d", "b": [1, 2.5, null, true]}'
    assert read_json(text) == json.loads(text)


def test_what_is_not_json_fails_as_it_would() -> None:
    with pytest.raises(json.JSONDecodeError):
        read_json('{"a": ')
