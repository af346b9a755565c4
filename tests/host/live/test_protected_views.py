"""A tab under secure-entry protection: its views end, new ones and remote input are refused."""

from __future__ import annotations

import pytest

from peer.live_view import ViewClosed, open_view
from server.host.browser.protection import protect, release
from server.host.live.views import TAB_HOLDS_SECRET
from tests.host.live.conftest import Watching


async def test_input_in_flight_is_refused_and_views_end_until_release(watching: Watching) -> None:
    view = await open_view(watching.connection, watching.tab.id)
    await view.take()
    page = watching.tab.page
    assert page is not None
    await protect(watching.tab, page, "http://127.0.0.1")
    try:
        # Input that reaches the host before its view is closed is refused, not typed.
        view.type_text("x")
        refused = await view.expect("error")
        assert refused["code"] == TAB_HOLDS_SECRET
        live = watching.server.builtin.services.live
        await live.end_views(watching.team_id, watching.tab.id, TAB_HOLDS_SECRET, "secure entry")
        await view.closed.wait()
        assert view.close_code == TAB_HOLDS_SECRET
        assert live.screencast(watching.team_id, watching.tab.id) is None
        with pytest.raises(ViewClosed) as closed:
            await open_view(watching.connection, watching.tab.id)
        assert closed.value.code == TAB_HOLDS_SECRET
    finally:
        await release(watching.tab)
    again = await open_view(watching.connection, watching.tab.id)
    await again.next_frame()
    again.close()
