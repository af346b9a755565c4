"""Shared by the service tests: a migrated database on each backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.db.engine import Database
from tests.support.databases import ScratchDatabase


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()
