"""What a client sends is read strictly: a number that is no number is refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from server.common.wire import InboundModel


class Sent(InboundModel):
    at: float | None = None


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_number_json_has_not_is_refused(number: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Sent.model_validate_json(f'{{"at": {number}}}')
    assert refused.value.errors()[0]["type"] == "finite_number"


def test_a_finite_number_is_taken() -> None:
    assert Sent.model_validate_json('{"at": 1.5e9}').at == 1.5e9
