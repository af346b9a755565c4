"""Learn from my browsing over a real peer: a member holds an agent's tab in real Chromium
and the host records page loads and presses on controls (role and name read in the
isolated world), never a field's value, a key, a secret field or a press outside a control;
a tab no agent owns, or a team that did not turn it on, records nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from peer.connection import TeamApiCallError
from server.host.browser.partitions import Partition
from tests.support.held_tabs import (
    AGENT,
    TYPED,
    Holding,
    holding_tabs,
    press,
    press_every_field_then_done,
)
from tests.support.hub_server import RunningHub
from tests.support.waiting import eventually


@pytest.fixture
async def holding(server: RunningHub, tmp_path: Path) -> AsyncIterator[Holding]:
    async with holding_tabs(server, tmp_path) as held:
        yield held


async def test_steps_in_an_agents_tab_name_controls_and_pages_never_values(
    holding: Holding,
) -> None:
    await holding.owner.call("browsing-memory-v1/set", {"enabled": True})
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form"), owner_agent_id=AGENT
    )
    view = await press_every_field_then_done(holding, tab.id)
    frame = await view.next_frame()
    await press(view, frame, holding, tab.id, "#next")
    await eventually(lambda: any(step.kind == "page" for step in holding.steps))
    await holding.services.live.steps.settled()
    expected = [
        'pressed textbox "Email"',
        'pressed button "Save"',
        'pressed button "Done"',
        'pressed link "Next"',
        'opened 127.0.0.1/orders/:id "Order 48213"',
    ]
    assert [step.line for step in holding.steps] == expected
    assert {(s.agent_id, s.tab_id) for s in holding.steps} == {(AGENT, tab.id)}
    kept = await holding.services.browsing_steps.steps_for_review(holding.team_id, AGENT)
    assert [step.line for step in kept] == expected
    assert TYPED not in str(kept)
    view.close()


async def test_steps_in_a_private_threads_tab_are_its_members(holding: Holding) -> None:
    await holding.owner.call("browsing-memory-v1/set", {"enabled": True})
    agent = await holding.owner.call("agents-v1/create", {"name": "Scout"})
    thread = await holding.member.call("threads-v1/start", {"agentId": agent["id"]})
    member_id = (await holding.member.call("host-v1/whoami"))["accountId"]
    tab = await holding.engine.open_tab(
        holding.team_id,
        Partition.shared(),
        url=holding.site.url("/form"),
        owner_agent_id=agent["id"],
        owner_thread_id=thread["id"],
    )
    view = await press_every_field_then_done(holding, tab.id)
    assert {s.thread_id for s in holding.steps} == {thread["id"]}
    kept = await holding.services.browsing_steps.steps_for_review(holding.team_id, agent["id"])
    assert kept
    assert {step.member_id for step in kept} == {member_id}
    view.close()


async def test_a_tab_no_agent_owns_records_nothing(holding: Holding) -> None:
    await holding.owner.call("browsing-memory-v1/set", {"enabled": True})
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form")
    )
    view = await press_every_field_then_done(holding, tab.id)
    assert holding.steps == []
    view.close()


async def test_the_setting_is_off_by_default_and_for_admins_only(holding: Holding) -> None:
    for route, args in (("get", {}), ("set", {"enabled": True})):
        with pytest.raises(TeamApiCallError) as refused:
            await holding.member.call(f"browsing-memory-v1/{route}", args)
        assert refused.value.code == "forbidden"
    assert await holding.owner.call("browsing-memory-v1/get", {}) == {"enabled": False}
    tab = await holding.engine.open_tab(
        holding.team_id, Partition.shared(), url=holding.site.url("/form"), owner_agent_id=AGENT
    )
    view = await press_every_field_then_done(holding, tab.id)
    # The presses were seen, but a team that did not turn it on keeps none of them.
    assert holding.steps
    assert await holding.services.browsing_steps.steps_for_review(holding.team_id, AGENT) == []
    assert await holding.owner.call("browsing-memory-v1/set", {"enabled": True}) == {
        "enabled": True
    }
    view.close()
