"""The host's services, built once at start."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from server.common.browser_address_policy import interface_addresses
from server.common.clock import Clock, SystemClock
from server.common.crypto.box import SecretBox
from server.common.keys import SigningKey
from server.common.protocol.capabilities import LIVE_VIEW_CAPABILITIES
from server.common.protocol.events import BrowserTabsChanged
from server.common.protocol.view import VIEW_PREFIX
from server.common.public_addresses import PublicOnlyPolicy
from server.config import Settings
from server.db.engine import Database
from server.host.agents.attention import AttentionRegistry
from server.host.agents.memory_review import MemoryReview
from server.host.agents.model_providers import ModelProviders
from server.host.agents.secret_handoff import SecretHandoffService
from server.host.agents.teaching import TeachingService
from server.host.agents.threads import ThreadService
from server.host.browser.callers import Caller
from server.host.browser.runtime import BrowserRuntime
from server.host.egress.channels import EGRESS_LABEL, EgressChannels
from server.host.live.steps import ReadFailed
from server.host.live.views import LiveViews
from server.host.metrics import HostMetrics
from server.host.proxies.judge import ProxyAddressJudge
from server.host.rtc.peers import PeerManager
from server.host.rtc.team_api import HostRouteTable, PeerIdentity, TeamApi
from server.host.services.agents import AgentService
from server.host.services.browsing_steps import BrowsingStepService
from server.host.services.control_requests import ControlRequestService
from server.host.services.memories import MemoryService
from server.host.services.profiles import BrowserProfileService
from server.host.services.providers import ProviderService
from server.host.services.proxies import ProxyService
from server.host.services.tabs import TabService
from server.host.services.tasks import TaskService
from server.host.services.vault import VaultService
from server.host.services.web_search import SearchEndpoints, WebSearchService
from server.host.services.workspace import Member, WorkspaceService
from server.host.tools.base import SecureEntryDesk, ToolContext, ToolSettings
from server.host.tools.page.isolated import IsolatedScriptError, evaluate_isolated
from server.host.web.fetcher import WebFetcher
from server.host.workspace.quotas import WorkspaceLimits
from server.host.workspace.workspaces import Workspaces

if TYPE_CHECKING:
    from playwright.async_api import Page


@dataclass(frozen=True, slots=True)
class HostCall:
    """What a Team API handler gets besides its args: the caller and the host's services."""

    peer: PeerIdentity
    host: HostServices

    @property
    def member(self) -> Member:
        """The caller as the services know a member: team, account and role."""
        return Member(self.peer.team_id, self.peer.account_id, self.peer.role)


@dataclass
class HostServices:
    """Every service of one host. ``host_id`` is known once the hub has registered it.

    Used as an async context manager: leaving it closes the views, the peers and the
    browser, in that order.
    """

    settings: Settings
    clock: Clock
    identity: SigningKey
    db: Database
    team_api: TeamApi
    browser: BrowserRuntime
    secrets: SecretBox
    metrics: HostMetrics
    peers: PeerManager = field(init=False)
    profiles: BrowserProfileService = field(init=False)
    tabs: TabService = field(init=False)
    memories: MemoryService = field(init=False)
    browsing_steps: BrowsingStepService = field(init=False)
    agents: AgentService = field(init=False)
    providers: ProviderService = field(init=False)
    proxies: ProxyService = field(init=False)
    egress: EgressChannels = field(init=False)
    vault: VaultService = field(init=False)
    secret_handoff: SecretHandoffService = field(init=False)
    attention: AttentionRegistry = field(init=False)
    models: ModelProviders = field(init=False)
    threads: ThreadService = field(init=False)
    memory_review: MemoryReview = field(init=False)
    teaching: TeachingService = field(init=False)
    live: LiveViews = field(init=False)
    control_requests: ControlRequestService = field(init=False)
    web: WebFetcher = field(init=False)
    web_search: WebSearchService = field(init=False)
    workspace: WorkspaceService = field(init=False)
    tasks: TaskService = field(init=False)
    host_id: str = ""
    _resources: AsyncExitStack = field(default_factory=AsyncExitStack, init=False)

    @classmethod
    def build(
        cls,
        settings: Settings,
        identity: SigningKey,
        db: Database,
        route_tables: Sequence[HostRouteTable],
        *,
        secrets: SecretBox,
        clock: Clock | None = None,
        search_endpoints: SearchEndpoints | None = None,
    ) -> HostServices:
        """The services; ``db`` is the hub's for the built-in host, the host's own otherwise.
        ``route_tables`` are the Team API routes it serves (``routes.tables``); ``secrets``
        seals provider keys (``services.keys.SecretKeys.open_box``)."""
        clock = clock or SystemClock()
        # Read once: the host's own addresses, refused to browsers, web_fetch and proxies.
        own_addresses = interface_addresses()
        proxy_judge = ProxyAddressJudge(
            PublicOnlyPolicy.from_entries(
                settings.host.proxy_allowed_hosts, own_addresses=own_addresses
            )
        )
        browser = BrowserRuntime(
            settings.host,
            settings.data_dir,
            clock,
            db,
            own_addresses=own_addresses,
            proxy_judge=proxy_judge,
        )
        # The live view is a channel, not a route table: it is listed beside its registration.
        team_api = TeamApi(list(route_tables), also=LIVE_VIEW_CAPABILITIES)
        metrics = HostMetrics()
        metrics.tab_states = browser.tab_states
        services = cls(settings, clock, identity, db, team_api, browser, secrets, metrics)
        services.peers = PeerManager(
            identity,
            settings.rtc,
            clock,
            services.team_api,
            lambda peer: HostCall(peer, services),
            metrics,
        )
        services.profiles = BrowserProfileService(db, clock, browser, services.peers.announce)
        services.tabs = TabService(browser, services.profiles, settings.host.search_url)
        services.memories = MemoryService(db, clock, services.peers.announce)
        services.browsing_steps = BrowsingStepService(db, clock)
        services.providers = ProviderService(db, clock, secrets, services.peers.announce)
        services.workspace = WorkspaceService(
            db,
            clock,
            Workspaces(settings.data_dir, WorkspaceLimits.from_settings(settings.host)),
            upload_seconds=settings.host.workspace_upload_seconds,
        )
        services.tasks = TaskService(services.peers.announce)
        services.proxies = ProxyService(
            db,
            clock,
            secrets,
            browser,
            browser.proxy_marks,
            services.peers.announce,
            judge=proxy_judge,
        )
        browser.use_proxies(services.proxies.plan_for)
        services.egress = EgressChannels()
        services.peers.register_channel(EGRESS_LABEL, services.egress.open)
        browser.proxied.launcher.computer_exit = services.egress.exit_for
        services.proxies.computer_online = services.egress.online
        services.egress.changed = services.proxies.status_changed
        browser.proxy_marks.changed = services.proxies.status_changed
        services.vault = VaultService(db, clock, secrets, services.peers.announce)
        services.memory_review = MemoryReview(
            services.memories,
            lambda team_id, provider_id: services.models.resolve(team_id, provider_id),
            lambda team_id, thread_id: services.threads.transcript(team_id, thread_id),
            delay=settings.host.memory_review_seconds,
            steps=services.browsing_steps,
            thread_member=lambda team_id, thread_id: services.threads.private_member(
                team_id, thread_id
            ),
        )
        services.agents = AgentService(
            db,
            clock,
            services.profiles,
            services.memories,
            services.providers,
            services.peers.announce,
            services.workspace,
            services.tasks,
            services.browsing_steps,
            deleted=services.memory_review.forget_agent,
        )
        services.attention = AttentionRegistry(
            clock, services.peers.announce, question_seconds=settings.host.ask_user_seconds
        )
        services.secret_handoff = SecretHandoffService(services.attention, services.vault)
        services.models = ModelProviders(services.providers.credentials)
        services.threads = ThreadService(
            db,
            clock,
            services.agents,
            services.attention,
            services.peers.announce,
            services.models.resolve,
            services.tool_context,
            services.providers.record_error,
            services.tasks,
            services.workspace,
            attachment_max_bytes=settings.host.attachment_max_bytes,
            turn_ended=services.memory_review.turns_ended,
            metrics=metrics,
            memories=services.memories,
            memory_prompt_tokens=settings.host.memory_prompt_tokens,
        )
        services.live = LiveViews(browser, settings.host, read_press, metrics)
        services.peers.register_channel(VIEW_PREFIX, services.live.open)
        services.live.steps.listen(
            lambda step: services.browsing_steps.record(step.team_id, step.agent_id, step.line)
        )
        services.teaching = TeachingService(
            clock, browser, services.live, services.threads, services.workspace
        )
        services.control_requests = ControlRequestService(
            browser, services.live, clock, services.peers.announce
        )
        services.web = WebFetcher(
            PublicOnlyPolicy.from_entries(
                settings.host.web_fetch_allowed_hosts, own_addresses=own_addresses
            )
        )
        services.web_search = WebSearchService(
            db, clock, secrets, search_endpoints or SearchEndpoints()
        )
        browser.observe_tabs(services.tabs_changed)
        browser.observe_pages(services.live.page_attached)
        return services

    async def __aenter__(self) -> HostServices:
        # Last in, first out: views end before the peers that watch them, peers before
        # the browser whose pages they show.
        self._resources.push_async_callback(self.browser.close)
        self._resources.push_async_callback(self.peers.close_all)
        self._resources.callback(self.egress.close_all)
        self._resources.push_async_callback(self.live.close_all)
        self._resources.callback(self.control_requests.close)
        self._resources.callback(self.workspace.close)
        await self._resources.enter_async_context(self.models)
        self._resources.push_async_callback(self.web_search.close)
        # Turns end first: they use the browser, the peers and the providers; then reviews.
        self._resources.push_async_callback(self.memories.uses_counted)
        self._resources.push_async_callback(self.memory_review.close)
        self._resources.push_async_callback(self.threads.close)
        return self

    def tabs_changed(self, team_id: str) -> None:
        """The team's tab list changed: its peers hear so, and requests for control whose
        holder let go end."""
        self.peers.announce(team_id, BrowserTabsChanged())
        self.control_requests.lapse(team_id)

    async def tool_context(
        self, team_id: str, caller: Caller, visible_to: Callable[[str], bool] | None = None
    ) -> ToolContext:
        """The agent tools' view of this host for one turn of ``caller``; ``visible_to`` says
        who sees the turn's thread (the people secure entry may ask)."""
        return ToolContext(
            engine=await self.browser.engine(),
            team_id=team_id,
            caller=caller,
            memories=self.memories,
            settings=ToolSettings.from_settings(self.settings.host),
            partition_for_agent=self.profiles.partition_for_agent,
            announce=self.peers.announce,
            web=self.web,
            fetch_proxy=functools.partial(self._fetch_proxy, team_id, caller),
            search=functools.partial(self.web_search.search, team_id),
            workspace=self.workspace,
            secure_entry=SecureEntryDesk(
                ask_person=self.attention.ask_person,
                vault=self.vault,
                end_views=self.live.end_views,
                visible_to=visible_to,
            ),
        )

    @contextlib.asynccontextmanager
    async def _fetch_proxy(self, team_id: str, caller: Caller) -> AsyncIterator[str | None]:
        """The proxy of the agent's browser profile, as an http:// address for as long as
        the block runs (a relay for SOCKS5 and a member's computer); None: Automatic."""
        if caller.agent_id is None:
            yield None
            return
        partition = await self.profiles.partition_for_agent(team_id, caller.agent_id)
        plan = (
            await self.proxies.plan_for(team_id, partition.key)
            if partition.kind == "profile"
            else None
        )
        if plan is None:
            yield None
            return
        launched = await self.browser.proxied.launcher.start_http(plan)
        try:
            yield launched.setting.url()
        finally:
            await launched.stop()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._resources.aclose()


async def read_press(page: Page, x: float, y: float) -> Any:
    """The control under a person's press, read in the page's isolated tools world."""
    try:
        return await evaluate_isolated(page, "press-target", [x, y])
    except IsolatedScriptError as exc:
        raise ReadFailed(str(exc)) from exc
