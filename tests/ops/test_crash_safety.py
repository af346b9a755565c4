"""``crewhost serve`` killed with SIGKILL under a write load loses no acknowledged write,
through the HTTP API or the Team API, and brings back every tab it opened.

A bounded share of ``bench/crash_safety.py`` (which runs about 200 rounds): ROUNDS seeded
rounds fit in about a minute on a loaded two-core machine.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.support.crash_rounds import Tally, crash_round

ROUNDS = 6
SEED = 19

pytestmark = pytest.mark.timeout(300)


async def test_every_acknowledged_write_survives_sigkill(tmp_path: Path) -> None:
    tally = Tally()
    rng = random.Random(SEED)
    for _ in range(ROUNDS):
        await crash_round(tmp_path, tally, rng)
        assert tally.problems == []
        assert tally.lost == []
    assert tally.rounds == ROUNDS
    # Writes through both APIs were acknowledged before the kills, and a tab each round.
    assert tally.acknowledged_http > ROUNDS
    assert tally.agents
    assert len(tally.tabs) == ROUNDS
