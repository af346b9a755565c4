"""``browser-teach-v1``: a member records a task in an agent's tab for the agent to learn.

Starting hands the tab to the member; only they may save or discard the recording, which
gives the tab back to its agent, and it ends with no steps when their control ends.
"""

from __future__ import annotations

from pydantic import Field

from server.common.protocol.ids import RecordingId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.teaching import MAX_TEACH_STEPS, Recording
from server.host.container import HostCall
from server.host.routes.browser_control import TabRef
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("browser-teach-v1")


class RecordingRef(InboundModel):
    recording_id: RecordingId


class RecordingView(WireModel):
    id: str
    tab_id: str
    agent_id: str
    started_at: float
    expires_at: float
    max_steps: int = Field(description="Steps kept at most; later ones are not recorded.")


class SavedView(WireModel):
    sent: bool = Field(description="False when nothing was done after the first page.")
    thread_id: str | None = Field(description="The thread the request for a skill went to.")
    steps: int
    path: str | None = Field(
        default=None, description="The agent's workspace file with the steps (teaching/…)."
    )


class Discarded(WireModel):
    discarded: bool = True


def _view(recording: Recording) -> RecordingView:
    return RecordingView(
        id=recording.id,
        tab_id=recording.tab_id,
        agent_id=recording.agent_id,
        started_at=recording.started_at,
        expires_at=recording.expires_at,
        max_steps=MAX_TEACH_STEPS,
    )


@routes.route("browser-teach-v1/start", args=TabRef, least_role=Role.MEMBER)
async def start_teaching(call: HostCall, args: TabRef) -> RecordingView:
    """Start recording on an agent's tab the member watches; the tab is handed to them."""
    return _view(await call.host.teaching.start(call.member, args.tab_id))


@routes.route("browser-teach-v1/save", args=RecordingRef, least_role=Role.MEMBER)
async def save_teaching(call: HostCall, args: RecordingRef) -> SavedView:
    """End the recording and send the agent the numbered steps, asking for a skill."""
    saved = await call.host.teaching.save(call.member, args.recording_id)
    return SavedView(
        sent=saved.thread_id is not None,
        thread_id=saved.thread_id,
        steps=saved.steps,
        path=saved.path,
    )


@routes.route("browser-teach-v1/discard", args=RecordingRef, least_role=Role.MEMBER)
async def discard_teaching(call: HostCall, args: RecordingRef) -> Discarded:
    """End the recording; nothing is sent."""
    await call.host.teaching.discard(call.member, args.recording_id)
    return Discarded()
