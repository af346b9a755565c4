"""A tab under secure-entry protection: its views end as it starts, new ones are refused."""

from __future__ import annotations

import pytest

from peer.live_view import ViewClosed, open_view
from server.host.browser.protection import protect, release
from server.host.live.views import TAB_HOLDS_SECRET
from tests.host.live.conftest import Watching


async def test_views_end_as_protection_starts_and_stay_refused_until_release(
    watching: Watching,
) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    await view.take()
    await view.next_frame()
    page = watching.tab.page
    assert page is not None
    live = watching.server.builtin.services.live
    # The views hear ProtectionChanged: they are gone by the time protect returns.
    await protect(watching.tab, page, "http://127.0.0.1", watching.engine.signals)
    try:
        assert live.sessions(watching.team_id, watching.tab.id) == []
        assert live.screencast(watching.team_id, watching.tab.id) is None
        await view.closed.wait()
        assert view.close_code == TAB_HOLDS_SECRET
        with pytest.raises(ViewClosed) as closed:
            await open_view(watching.connection, watching.tab.id)
        assert closed.value.code == TAB_HOLDS_SECRET
    finally:
        await release(watching.tab)
    again = await open_view(watching.connection, watching.tab.id)
    await again.next_frame()
    again.close()
