"""Teach a task: a member records what they do in an agent's tab, and the agent is asked to
make a draft skill of it (``propose_skill``), which a person then reviews and saves.

Starting hands the tab to the member (in their live view). Steps follow the rules of
``live.steps``; a recording keeps at most ``MAX_TEACH_STEPS`` and lasts ``TEACH_SECONDS``.
Only the member who started it may save or discard it; when their control ends, it ends
with no steps. Saving starts a thread of theirs with the agent and sends a message naming
the workspace file (``teaching/…``) with the numbered steps; a recording with nothing
after its first page sends nothing. Recordings live in memory: they never outlast the
host, or the holding.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, field

from server.common.clock import Clock
from server.common.errors import Conflict, CrewhostError, Forbidden, NotFound
from server.common.redaction import redact
from server.host.agents.threads import ThreadService
from server.host.browser.access import require_member_reach
from server.host.browser.runtime import BrowserRuntime
from server.host.live.steps import Step, page_line, recordable
from server.host.live.views import LiveViews
from server.host.services.workspace import Member, WorkspaceService
from server.host.workspace.workspaces import WorkspaceRef

MAX_TEACH_STEPS = 200
TEACH_SECONDS = 600.0
TEACH_FOLDER = "teaching"
MAX_TITLE_CHARS = 80


def ask_for_skill(path: str) -> str:
    """The message that asks the agent to propose a draft skill (``propose_skill``) of the
    steps in ``path`` (its own workspace's file, named where it is, not attached as a copy).
    The draft waits for a person to review, edit and save it (``skills-v1``)."""
    return (
        f"I recorded how I do a task in your browser; the numbered steps are in `{path}` in "
        "your workspace (read it with workspace_read). Please make a skill of it and propose "
        "it with propose_skill: a short name, a description saying what the task is for and "
        "when to use it, and instructions with the steps in general terms (what changes each "
        "time and what stays the same) and how to check it worked. Ask me about any step that "
        "is unclear first. The skill is a draft until a person of the team saves it."
    )


@dataclass(eq=False)
class Recording:
    """One member's recording on one agent's tab; ``steps[0]`` is the page it started on."""

    id: str
    team_id: str
    tab_id: str
    agent_id: str
    account_id: str
    started_at: float
    expires_at: float
    title: str
    steps: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Saved:
    """What saving sent: the thread the request went to (None: nothing was sent) and the
    workspace file holding the steps."""

    thread_id: str | None
    steps: int
    path: str | None = None


class TeachingService:
    """Running recordings by id; each ends once, saved, discarded, let go or expired."""

    def __init__(
        self,
        clock: Clock,
        browser: BrowserRuntime,
        live: LiveViews,
        threads: ThreadService,
        workspace: WorkspaceService,
        *,
        seconds: float = TEACH_SECONDS,
    ) -> None:
        self._clock = clock
        self._browser = browser
        self._live = live
        self._threads = threads
        self._workspace = workspace
        self._seconds = seconds
        self._recordings: dict[str, Recording] = {}
        live.steps.on_let_go(self.let_go)

    async def start(self, member: Member, tab_id: str) -> Recording:
        """Start recording ``member`` on an agent's tab, which is handed to them."""
        engine = await self._browser.engine()
        tab = engine.get_tab(member.team_id, tab_id)
        require_member_reach(tab, member.account_id)
        if tab.owner_agent_id is None:
            raise Conflict("only an agent's tab can teach it a task", code="teachNeedsAgentTab")
        if not recordable(tab, tab.url):
            raise Conflict(
                "steps are not recorded on this tab: open a web page that is not a private "
                "sign-in or in secure entry",
                code="teachTabNotRecordable",
            )
        self._drop_expired()
        if any(r.team_id == member.team_id and r.tab_id == tab.id for r in self._live_ones()):
            raise Conflict("this tab is being recorded already", code="teachRecordingRunning")
        await self._live.give_control(member.team_id, tab.id, member.account_id)
        now = self._clock.now()
        first = page_line(tab.url, tab.title) or tab.url
        recording = Recording(
            uuid.uuid4().hex,
            member.team_id,
            tab.id,
            tab.owner_agent_id,
            member.account_id,
            now,
            now + self._seconds,
            redact(" ".join(tab.title.split())[:MAX_TITLE_CHARS]),
            [first],
        )
        self._recordings[recording.id] = recording
        return recording

    async def step(self, step: Step) -> None:
        """A step of a person holding a tab: theirs when they record on it."""
        for recording in self._live_ones():
            if (recording.team_id, recording.tab_id, recording.account_id) == (
                step.team_id,
                step.tab_id,
                step.account_id,
            ) and len(recording.steps) < MAX_TEACH_STEPS:
                recording.steps.append(step.line)

    def let_go(self, team_id: str, tab_id: str, account_id: str) -> None:
        """Control ended: the member's recording on the tab ends with no steps."""
        for recording in list(self._recordings.values()):
            if (recording.team_id, recording.tab_id, recording.account_id) == (
                team_id,
                tab_id,
                account_id,
            ):
                del self._recordings[recording.id]

    async def save(self, member: Member, recording_id: str) -> Saved:
        """End the recording and ask its agent for a skill, the steps attached. A step still
        being read (the press just before "done") is waited for: it belongs in the file."""
        waiting = self._own(member, recording_id)
        await self._live.steps.caught_up(waiting.team_id, waiting.tab_id)
        recording = self._take(member, recording_id)
        await self._give_back(recording)
        if recording.expires_at <= self._clock.now():
            raise Conflict(
                "the recording ran out of time; start a new one", code="teachRecordingExpired"
            )
        if len(recording.steps) < 2:
            return Saved(None, 0)
        title = f"Teach: {recording.title}" if recording.title else "Teach a task"
        thread = await self._threads.start_thread(
            member.team_id, recording.agent_id, member.account_id, title, shared=False
        )
        path = f"{TEACH_FOLDER}/steps-{recording.id}.txt"
        # Blanked again as written: the file reaches the model through ``workspace_read``.
        lines = [f"{n}. {redact(line)}" for n, line in enumerate(recording.steps, start=1)]
        ref = WorkspaceRef(member.team_id, recording.agent_id)
        await self._workspace.write(ref, path, ("\n".join(lines) + "\n").encode())
        await self._threads.send(member, thread.id, ask_for_skill(path))
        return Saved(thread.id, len(recording.steps), path)

    async def discard(self, member: Member, recording_id: str) -> None:
        """End the recording and give the tab back to its agent; nothing is sent."""
        await self._give_back(self._take(member, recording_id))

    async def _give_back(self, recording: Recording) -> None:
        """The recording is over: the tab goes back to its agent, unless its member let go
        of it already or it closed."""
        engine = await self._browser.engine()
        with contextlib.suppress(CrewhostError):
            engine.release(recording.team_id, recording.tab_id, recording.account_id)

    def _take(self, member: Member, recording_id: str) -> Recording:
        """The member's own recording, out of the running ones."""
        recording = self._own(member, recording_id)
        del self._recordings[recording.id]
        return recording

    def _own(self, member: Member, recording_id: str) -> Recording:
        """The member's own running recording."""
        recording = self._recordings.get(recording_id)
        if recording is None or recording.team_id != member.team_id:
            raise NotFound("no such recording", code="teachRecordingNotFound")
        if recording.account_id != member.account_id:
            raise Forbidden(
                "only the member who started a recording can save or discard it",
                code="teachNotYours",
            )
        return recording

    def _live_ones(self) -> list[Recording]:
        now = self._clock.now()
        return [r for r in self._recordings.values() if r.expires_at > now]

    def _drop_expired(self) -> None:
        """Expired recordings nobody saved or discarded: forgotten, keeping nothing."""
        now = self._clock.now()
        for recording in list(self._recordings.values()):
            if recording.expires_at <= now:
                del self._recordings[recording.id]
