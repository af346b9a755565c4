"""What a tool call may use (``ToolContext``), and how a turn gets one: the host's
``ToolContextFactory``, built once in the container from its services and asked by the
thread service at the start of each turn."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from server.common.protocol.events import HostEvent
from server.config import HostSettings
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition
from server.host.browser.runtime import BrowserRuntime
from server.host.services.memories import MemoryService
from server.host.services.profiles import BrowserProfileService
from server.host.services.proxies import ProxyService
from server.host.services.skills import SkillService
from server.host.services.tasks import ThreadTasks
from server.host.services.vault import VaultService
from server.host.services.web_search import WebSearchService
from server.host.services.workspace import WorkspaceService
from server.host.web.fetcher import FetchedPage, ProxyFailed, WebFetcher

if TYPE_CHECKING:
    from server.common.protocol.events import SecretRequestDetails, VaultItemRequestDetails
    from server.host.web.search import SearchResult

# The team's web search: (query, max_results) to results.
SearchWeb = Callable[[str, int], Awaitable[list["SearchResult"]]]
# Distils ``content`` as ``prompt`` asks, with the calling agent's model: (prompt, content).
Summarize = Callable[[str, str], Awaitable[str]]


@dataclass(frozen=True)
class PersonQuestion:
    """A question an agent asks the people who see its thread."""

    call_id: str
    question: str
    options: list[str] | None
    multiple: bool


# Asks a question; the answer (None when none came) and why: answered, expired or cancelled.
AskPerson = Callable[[PersonQuestion], Awaitable[tuple[str | list[str] | None, str]]]

SubAgentType = Literal["researcher", "page_operator", "general"]


@dataclass(frozen=True)
class SubAgentRequest:
    """A sub-task an agent hands to a sub-agent of its own."""

    prompt: str
    description: str
    type: SubAgentType
    tab_id: str | None


@dataclass(frozen=True)
class SubAgentReport:
    """How a sub-agent ended: its status, its last words and the tool calls it used."""

    sub_agent_id: str
    status: str
    reason: str | None
    report: str
    tool_calls: int


# Runs a sub-agent to its end within the calling turn; None when the turn has no tool
# calls left to give it.
SpawnSubAgent = Callable[[SubAgentRequest], Awaitable[SubAgentReport | None]]


@dataclass(frozen=True)
class AskableAgent:
    """An agent of the team the calling agent may ask: its name and what it is for."""

    id: str
    name: str
    purpose: str


@dataclass(frozen=True)
class DelegationRequest:
    """A task for another agent: whom (``agent_id``), what, and how long to wait for it."""

    agent_id: str
    task: str
    seconds: float
    # The ``ask_agent`` call that asks (the asking thread's card names the new thread).
    call_id: str | None


@dataclass(frozen=True)
class DelegationReport:
    """How an asked agent's turn ended (``timeout``: not in time, and stopped), its last
    words, and the files of the team's workspace they name."""

    thread_id: str
    status: str
    reason: str | None
    answer: str
    files: list[str]


class Delegation(Protocol):
    """A turn's way to other agents of its team (``list_agents``, ``ask_agent``)."""

    async def askable(self) -> list[AskableAgent]:
        """The agents this one may ask (those its admins chose that still exist)."""
        ...

    async def chain(self) -> list[str]:
        """The agents of the asking chain, this one first, then the one that asked it…"""
        ...

    async def ask(self, request: DelegationRequest) -> DelegationReport:
        """Start the asked agent's turn in a new thread linked to this one; wait for its end
        (stopped with this turn, or when the time runs out)."""
        ...


@dataclass
class TurnState:
    """State of one agent turn (one model response and the tool calls it makes)."""

    memory_hosts_shown: set[str] = field(default_factory=set)
    # The id of the call that runs now (a question a tool asks is bound to it).
    call_id: str | None = None


@dataclass(frozen=True)
class ToolSettings:
    """The timings tools wait by; tests shorten them."""

    # Cookie banners: how long after DOM ready a reject button is looked for.
    consent_window: float = 15.0
    # Bot checks: shared wait per document, and the wait after the one offered click.
    challenge_budget: float = 15.0
    challenge_click_wait: float = 6.0
    # How much of that wait the snapshot that ``navigate`` returns may spend.
    navigate_challenge_wait: float = 4.0
    # ...how often a waiting read looks again, and how long a Turnstile widget is given to
    # pass by itself before its checkbox is offered.
    challenge_poll: float = 1.0
    challenge_token_wait: float = 3.0
    # Settle: quiet time without skeletons or busy regions, and the longest wait.
    settle_quiet: float = 0.15
    settle_max: float = 2.0
    # A young document without controls waits for its first change: at most this long
    # while it loads, and until this long after its load event once loaded.
    young_document: float = 1.0
    young_after_load: float = 0.5
    # A document is young for this long after it started.
    young_document_age: float = 2.5
    # fill_fields: the whole set must be typed within this.
    fill_deadline: float = 30.0
    # wait_for: the default and the longest timeout an agent may ask for.
    wait_default: float = 10.0
    wait_max: float = 30.0
    # After a click, how long the page is watched for a change before NOT VERIFIED.
    click_observe: float = 0.5
    # How long a click, hover or check waits for its target to be visible, still and uncovered.
    action_timeout: float = 5.0
    # The longest an evaluate script may run.
    evaluate_deadline: float = 10.0
    # After a script's deadline: how long stopping it, and the page's answer after, may take;
    # then how long a page that still does not answer is given to end.
    script_answer_wait: float = 2.0
    script_end_wait: float = 5.0
    # Secure entry: how long a person has to answer, and how long a submit that keeps the
    # document is given before the fields are emptied and the page is scanned.
    secret_answer_wait: float = 300.0
    secret_submit_wait: float = 5.0
    # Where a search phrase typed into navigate or open goes; {query} is the phrase.
    search_url: str = HostSettings.model_fields["search_url"].default

    @classmethod
    def from_settings(cls, host: HostSettings) -> ToolSettings:
        """The tools' settings for a host: the timings above, the host's search address."""
        return cls(search_url=host.search_url)


@dataclass(frozen=True)
class PersonReply:
    """How a request for a secret or a vault item ended; ``payload`` is what the person
    sent (a secret, a new item's id), never shown in a repr."""

    outcome: Literal["answered", "declined", "timeout", "cancelled"]
    payload: Any = field(default=None, repr=False)


class AskForSecret(Protocol):
    """The attention registry's ``ask_person``: a request to the people of a thread for a
    secret or a new vault item."""

    async def __call__(
        self,
        *,
        team_id: str,
        thread_id: str,
        agent_id: str,
        tool: str,
        summary: str,
        visible_to: Callable[[str], bool],
        secret: SecretRequestDetails | None = None,
        vault_item: VaultItemRequestDetails | None = None,
        seconds: float | None = None,
        addressed_to: Sequence[str] | None = None,
        routine_id: str | None = None,
    ) -> PersonReply: ...


@dataclass(frozen=True)
class Unattended:
    """A turn nobody in the chat started (a routine's run, an asked agent's): who answers
    its requests (none named: whoever sees the thread), how long each waits (None: the
    registry's default), and the routine's id (None: no routine's)."""

    approvers: tuple[str, ...]
    attention_seconds: float | None
    routine_id: str | None
    # Another turn of the team asked for it and waits for it: it runs on that turn's place.
    on_callers_place: bool = False


@dataclass(frozen=True)
class SecureEntryDesk:
    """What secure entry reaches besides the page: the people who see the turn's thread and
    the team's vault. (The tab's live views close on ``ProtectionChanged``.)"""

    ask_person: AskForSecret
    vault: VaultService
    # Who sees the thread; None where the call cannot raise attention (outside a thread).
    visible_to: Callable[[str], bool] | None
    # A turn nobody sits in: its requests go to its approvers and wait as its others do.
    unattended: Unattended | None = None


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool call may use: the engine, whose call it is, and the turn it is in."""

    engine: BrowserEngine
    team_id: str
    caller: Caller
    # Starts ``engine`` (and restores its saved tabs) before a tab or page tool's first
    # call, so a turn that never touches a page never starts a browser; None where the
    # engine runs already.
    start_browser: Callable[[], Awaitable[object]] | None = None
    turn: TurnState = field(default_factory=TurnState)
    memories: MemoryService | None = None
    # The member whose private thread the turn is in: their memories join the team's in
    # what the turn reads, and what it keeps is theirs. None: a shared thread, the team's.
    memory_member: str | None = None
    # The turn the call is in (where a memory ``remember`` keeps came from).
    turn_id: str | None = None
    settings: ToolSettings = field(default_factory=ToolSettings)
    # Where the calling agent's new tabs open (the profile service's partition_for_agent,
    # given team and agent ids); without it they open in the team's shared partition.
    partition_for_agent: Callable[[str, str], Awaitable[Partition]] | None = None
    # Tells the team's members something (event name and payload), such as a request to
    # take a tab over; without it the agent's own answer is the only word they get.
    announce: Callable[[str, HostEvent], None] | None = None
    # web_fetch's fetcher (public addresses only, unless the host allows more); without it
    # the tool says the host does not fetch.
    web: WebFetcher | None = None
    # Fetches an address with the fetcher given, out the calling agent's way: through its
    # browser profile's proxy when it has one, so web_fetch leaves where the agent's
    # browser does, and a proxy that will not carry it is the fetch's error as it would be
    # a page's. Without it the fetcher goes straight out.
    fetch_page: Callable[[WebFetcher, str], Awaitable[FetchedPage]] | None = None
    # web_search's engine, the one the team chose; without it the tool says none is set.
    search: SearchWeb | None = None
    # The calling agent's model, for a tool's ``prompt`` (web_fetch, get_tab_content).
    summarize: Summarize | None = None
    # The agent's workspace files and the team's shared ones.
    workspace: WorkspaceService | None = None
    # Asks the members who see the thread a question (ask_user); without it nobody is asked.
    ask_person: AskPerson | None = None
    # The thread's task list (create_task and the rest).
    tasks: ThreadTasks | None = None
    # Starts a sub-agent (the agent tool); None in a sub-agent: no recursion.
    spawn_sub_agent: SpawnSubAgent | None = None
    # A sub-agent's context: it may not ask people, nor start sub-agents of its own.
    sub_agent: bool = False
    # Secure entry (submit_secret, fill_from_vault, request_vault_item); without it they refuse.
    secure_entry: SecureEntryDesk | None = None
    # The team's skills (load_skill, read_skill_file, propose_skill); without it they refuse.
    skills: SkillService | None = None
    # The team's other agents this agent may ask; None outside an agent's own turn.
    delegation: Delegation | None = None


@dataclass(frozen=True)
class ToolContextFactory:
    """The host's side of every tool context: the browser, the services the tools reach,
    and the people secure entry asks (``ask_for_secret``, the attention registry's)."""

    browser: BrowserRuntime
    settings: HostSettings
    memories: MemoryService
    profiles: BrowserProfileService
    proxies: ProxyService
    workspace: WorkspaceService
    web: WebFetcher
    web_search: WebSearchService
    vault: VaultService
    announce: Callable[[str, HostEvent], None]
    ask_for_secret: AskForSecret
    skills: SkillService | None = None

    async def for_turn(
        self,
        team_id: str,
        caller: Caller,
        *,
        visible_to: Callable[[str], bool] | None = None,
        memory_member: str | None = None,
        turn_id: str | None = None,
        summarize: Summarize | None = None,
        ask_person: AskPerson | None = None,
        tasks: ThreadTasks | None = None,
        spawn_sub_agent: SpawnSubAgent | None = None,
        delegation: Delegation | None = None,
        unattended: Unattended | None = None,
    ) -> ToolContext:
        """The tools' view of this host for one turn of ``caller``: ``visible_to`` says who
        sees the turn's thread (the people secure entry may ask), ``memory_member`` whose
        private thread it is, ``unattended`` who answers when nobody sits in it; the rest is
        the turn's own (its model, its people, its task list, its sub-agents, the agents it
        may ask)."""
        return ToolContext(
            engine=self.browser.engine_as_is,
            start_browser=self.browser.engine,
            team_id=team_id,
            caller=caller,
            memories=self.memories,
            memory_member=memory_member,
            turn_id=turn_id,
            settings=ToolSettings.from_settings(self.settings),
            partition_for_agent=self.profiles.partition_for_agent,
            announce=self.announce,
            web=self.web,
            fetch_page=functools.partial(self._fetch_page, team_id, caller),
            search=functools.partial(self.web_search.search, team_id),
            summarize=summarize,
            workspace=self.workspace,
            ask_person=ask_person,
            tasks=tasks,
            spawn_sub_agent=spawn_sub_agent,
            delegation=delegation,
            secure_entry=SecureEntryDesk(
                ask_person=self.ask_for_secret,
                vault=self.vault,
                visible_to=visible_to,
                unattended=unattended,
            ),
            skills=self.skills,
        )

    async def for_outside_session(self, team_id: str, caller: Caller) -> ToolContext:
        """The tools' view of this host for an outside agent's MCP session: the browser
        alone, new tabs in the team's shared profile; no memories, model, people or files."""
        return ToolContext(
            engine=await self.browser.engine(),
            team_id=team_id,
            caller=caller,
            settings=ToolSettings.from_settings(self.settings),
            announce=self.announce,
        )

    async def _fetch_page(
        self, team_id: str, caller: Caller, web: WebFetcher, url: str
    ) -> FetchedPage:
        """``url`` fetched through the proxy of the agent's browser profile (an http://
        address for the fetch's length: a relay for SOCKS5 and a member's computer), or
        straight out when it has none (Automatic)."""
        plan = None
        if caller.agent_id is not None:
            partition = await self.profiles.partition_for_agent(team_id, caller.agent_id)
            if partition.kind == "profile":
                plan = await self.proxies.plan_for(team_id, partition.key)
        if plan is None:
            return await web.fetch(url)
        proxied = self.browser.proxied
        launched = await proxied.launcher.start_http(plan)
        try:
            try:
                page = await web.fetch(url, proxy=launched.setting.url())
            except ProxyFailed as failed:
                raise await proxied.refused(launched, url, failed.proxy_status) from None
            await proxied.answered(launched, page.final_url, page.status, page.headers)
            return page
        finally:
            await launched.stop()
