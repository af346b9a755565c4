"""What a client sends is read strictly: a number that is no number is refused, and so is a
text holding a NUL, wherever it is."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from server.common.wire import InboundModel


class Sent(InboundModel):
    at: float | None = None
    name: str = ""
    tags: list[str] = []
    env: dict[str, str] = {}


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_number_json_has_not_is_refused(number: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Sent.model_validate_json(f'{{"at": {number}}}')
    assert refused.value.errors()[0]["type"] == "finite_number"


def test_a_finite_number_is_taken() -> None:
    assert Sent.model_validate_json('{"at": 1.5e9}').at == 1.5e9


@pytest.mark.parametrize(
    ("field", "value"),
    [("name", "a\x00b"), ("tags", ["ok", "\x00"]), ("env", {"K\x00": "v"})],
)
def test_a_nul_anywhere_in_a_text_is_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as refused:
        Sent.model_validate_json(json.dumps({field: value}))  # NUL as JSON writes it
    assert refused.value.errors()[0]["loc"] == (field,)
    assert Sent.model_validate({"name": "a\tb", "tags": ["é"]}).name == "a\tb"
