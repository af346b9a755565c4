"""Migration and lookup tests start from an empty database, before any revision."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.databases import BACKENDS, ScratchDatabase, scratch_database


@pytest.fixture(params=BACKENDS)
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ScratchDatabase]:
    """A fresh, empty database, once on SQLite and once on PostgreSQL."""
    async with scratch_database(request.param, tmp_path) as db:
        yield db
