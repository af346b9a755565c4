"""The host's services, built once at start, in parts and in dependency order.

Each builder below makes one part (the machinery, the stores, the browser's services,
the agents, the people-facing views) from the parts before it; ``HostServices`` gets
every service at construction, and ``_wire_signals`` lists who follows which change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, fields
from types import TracebackType
from typing import Any

from server.common.browser_address_policy import interface_addresses
from server.common.clock import Clock, SystemClock
from server.common.crypto.box import SecretBox
from server.common.keys import SigningKey
from server.common.protocol.capabilities import LIVE_VIEW_CAPABILITIES
from server.common.protocol.events import BrowserTabsChanged
from server.common.protocol.view import VIEW_PREFIX
from server.common.public_addresses import PublicOnlyPolicy
from server.common.roles import Role
from server.config import Settings
from server.db.engine import Database
from server.host.agents.attention import AttentionRegistry
from server.host.agents.budgets import BudgetService
from server.host.agents.email_notices import MailServer
from server.host.agents.hub_outbox import HubOutbox
from server.host.agents.mcp.connections import McpConnections
from server.host.agents.mcp.sandbox import StdioSandbox
from server.host.agents.mcp_endpoint import McpEndpoint
from server.host.agents.mcp_servers import McpServerChanged, McpServerService
from server.host.agents.mcp_sign_in import McpSignIns
from server.host.agents.memory_review import MemoryReview
from server.host.agents.model_providers import ModelProviders
from server.host.agents.notifications import NotificationService
from server.host.agents.routine_hooks import RoutineHookService, RoutinesForHooks
from server.host.agents.routine_scheduler import RoutineScheduler
from server.host.agents.routines import RoutineService
from server.host.agents.secret_handoff import SecretHandoffService
from server.host.agents.teaching import TeachingService
from server.host.agents.team_webhook_events import app_link
from server.host.agents.team_webhook_sender import WebhookSender
from server.host.agents.team_webhooks import TeamWebhookService
from server.host.agents.templates import AgentTemplateService
from server.host.agents.threads import ThreadService, TurnEnded
from server.host.agents.turn_slots import TurnSlots
from server.host.agents.usage import UsageService
from server.host.agents.usage_meter import UsageMeters
from server.host.agents.usage_prices import load_price_table
from server.host.agents.work_signals import (
    AttentionWaiting,
    BudgetReached,
    RoutineDeleted,
    RunFinished,
)
from server.host.browser.pages import PageAttached
from server.host.browser.protection import ProtectionChanged
from server.host.browser.runtime import BrowserRuntime
from server.host.browser.tab_registry import TabsChanged
from server.host.egress.channels import EGRESS_LABEL, EgressChannels, EgressOnline
from server.host.live.steps import StepRecorded, read_press
from server.host.live.views import LiveViews
from server.host.metrics import HostMetrics
from server.host.proxies.judge import ProxyAddressJudge
from server.host.proxies.marks import ProxyStatusChanged
from server.host.rtc.peers import PeerManager
from server.host.rtc.revocations import MemberRemoved, RemovalsHeard
from server.host.rtc.team_api import HostRouteTable, PeerIdentity, TeamApi
from server.host.services.agents import AgentDeleted, AgentGone, AgentService
from server.host.services.browsing_steps import BrowsingStepService
from server.host.services.control_requests import ControlRequestService
from server.host.services.memories import MemoryService
from server.host.services.profiles import BrowserProfileService
from server.host.services.providers import ProviderService
from server.host.services.proxies import ProxyService
from server.host.services.skills import SkillService
from server.host.services.tabs import TabService
from server.host.services.tasks import TaskService
from server.host.services.vault import VaultService
from server.host.services.web_search import SearchEndpoints, WebSearchService
from server.host.services.workspace import Member, WorkspaceService
from server.host.signals import Signals
from server.host.tools.context import ToolContextFactory
from server.host.web.fetcher import WebFetcher
from server.host.workspace.quotas import WorkspaceLimits
from server.host.workspace.workspaces import Workspaces


@dataclass(frozen=True, slots=True)
class HostCall:
    """What a Team API handler gets besides its args: the caller and the host's services."""

    peer: PeerIdentity
    host: HostServices

    @property
    def member(self) -> Member:
        """The caller as the services know a member: team, account and role."""
        return Member(self.peer.team_id, self.peer.account_id, self.peer.role)


@dataclass(frozen=True)
class _Base:
    """What the host is given: its settings, clock, key, database and secret box."""

    settings: Settings
    clock: Clock
    identity: SigningKey
    db: Database
    secrets: SecretBox


@dataclass(frozen=True)
class _Machinery:
    """The signal hub, the browser, member egress, metrics and the peers."""

    signals: Signals
    egress: EgressChannels
    browser: BrowserRuntime
    metrics: HostMetrics
    team_api: TeamApi
    peers: PeerManager
    proxy_judge: ProxyAddressJudge
    web: WebFetcher
    webhook_sender: WebhookSender
    # Whether the members who left while the link was down have been heard of.
    removals: RemovalsHeard


@dataclass(frozen=True)
class _Stores:
    """The services over the host's own tables and folders."""

    memories: MemoryService
    browsing_steps: BrowsingStepService
    providers: ProviderService
    workspace: WorkspaceService
    tasks: TaskService
    vault: VaultService
    web_search: WebSearchService


@dataclass(frozen=True)
class _Browsing:
    """The services of the team's browser: profiles, tabs and proxies."""

    profiles: BrowserProfileService
    tabs: TabService
    proxies: ProxyService


@dataclass(frozen=True)
class _Agents:
    """The agents, their turns and what follows them (attention, memory reviews)."""

    agents: AgentService
    skills: SkillService
    attention: AttentionRegistry
    secret_handoff: SecretHandoffService
    models: ModelProviders
    tool_contexts: ToolContextFactory
    threads: ThreadService
    memory_review: MemoryReview
    routines: RoutineService
    routine_scheduler: RoutineScheduler
    hub_outbox: HubOutbox
    routine_hooks: RoutineHookService
    team_webhooks: TeamWebhookService
    mcp_endpoint: McpEndpoint
    mcp_servers: McpServerService
    mcp_sign_ins: McpSignIns
    usage: UsageService
    budgets: BudgetService
    agent_templates: AgentTemplateService


@dataclass(frozen=True)
class _People:
    """What people watch and steer: live views, teaching and requests for control; what
    they are told: notifications, by email over the team's mail server too."""

    live: LiveViews
    teaching: TeachingService
    control_requests: ControlRequestService
    mail: MailServer
    notifications: NotificationService


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
    secrets: SecretBox
    signals: Signals
    egress: EgressChannels
    browser: BrowserRuntime
    metrics: HostMetrics
    team_api: TeamApi
    peers: PeerManager
    proxy_judge: ProxyAddressJudge
    web: WebFetcher
    webhook_sender: WebhookSender
    removals: RemovalsHeard
    memories: MemoryService
    browsing_steps: BrowsingStepService
    providers: ProviderService
    workspace: WorkspaceService
    tasks: TaskService
    vault: VaultService
    web_search: WebSearchService
    profiles: BrowserProfileService
    tabs: TabService
    proxies: ProxyService
    agents: AgentService
    skills: SkillService
    attention: AttentionRegistry
    secret_handoff: SecretHandoffService
    models: ModelProviders
    tool_contexts: ToolContextFactory
    threads: ThreadService
    memory_review: MemoryReview
    routines: RoutineService
    routine_scheduler: RoutineScheduler
    hub_outbox: HubOutbox
    routine_hooks: RoutineHookService
    team_webhooks: TeamWebhookService
    mcp_endpoint: McpEndpoint
    mcp_servers: McpServerService
    mcp_sign_ins: McpSignIns
    usage: UsageService
    budgets: BudgetService
    agent_templates: AgentTemplateService
    live: LiveViews
    teaching: TeachingService
    control_requests: ControlRequestService
    mail: MailServer
    notifications: NotificationService
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
        webhook_sender: WebhookSender | None = None,
    ) -> HostServices:
        """The services; ``db`` is the hub's for the built-in host, the host's own otherwise.
        ``route_tables`` are the Team API routes it serves (``routes.tables``); ``secrets``
        seals provider keys (``services.keys.SecretKeys.open_box``); ``webhook_sender``
        replaces the team webhooks' sender (a test's resolver or allowed endpoints)."""
        base = _Base(settings, clock or SystemClock(), identity, db, secrets)
        # A Team API handler's call names the services, made last: the peers answer none
        # before the host is linked.
        services: HostServices
        machinery = _machinery(
            base, route_tables, lambda peer: HostCall(peer, services), webhook_sender
        )
        stores = _stores(base, machinery, search_endpoints or SearchEndpoints())
        browsing = _browsing(base, machinery, stores)
        agents = _agents(base, machinery, stores, browsing)
        people = _people(base, machinery, stores, agents)
        services = cls(**_fields_of(base, machinery, stores, browsing, agents, people))
        _wire_signals(services)
        return services

    async def __aenter__(self) -> HostServices:
        # Before anything is held: what a former run left waiting (a crash leaves it so)
        # ends interrupted.
        await self.threads.recover()
        await self.workspace.recover()
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
        await self._resources.enter_async_context(self.team_webhooks)
        # Outside agents' MCP sessions end before the browser and the turns they wait on.
        await self._resources.enter_async_context(self.mcp_endpoint.running())
        # After the turns end (they call its servers): leaving it ends every MCP session.
        await self._resources.enter_async_context(self.mcp_servers.connections)
        # Before the browser: a running sign-in's private tab closes.
        self._resources.push_async_callback(self.mcp_sign_ins.close)
        # Turns end first: they use the browser, the peers and the providers; then reviews.
        self._resources.push_async_callback(self.memories.uses_counted)
        self._resources.push_async_callback(self.memory_review.close)
        # After the turns end: what they recorded is written.
        self._resources.push_async_callback(self.usage.close)
        self._resources.push_async_callback(self.threads.close)
        # Routines stop firing and following runs before turns end (those end interrupted).
        self._resources.push_async_callback(self.routines.close)
        self._resources.push_async_callback(self.routine_scheduler.close)
        self.notifications.start()
        self._resources.push_async_callback(self.notifications.close)
        # First of all: what subscribers still run ends before anything they use.
        self._resources.push_async_callback(self.signals.close)
        # Turns the last life put aside (waiting for consent) are taken up where they were,
        # before the routines look for their runs.
        self.threads.resume()
        # Runs the last life left under way end interrupted (but those whose turns were
        # taken up); due routines fire from now on.
        await self.routine_scheduler.start()
        # Before the process freezes what start-up made (server/serve.py, host/start.py).
        await asyncio.to_thread(load_price_table)
        return self

    def tabs_changed(self, signal: TabsChanged) -> None:
        """The team's tab list changed: its peers hear so, and requests for control whose
        holder let go end."""
        self.peers.announce(signal.team_id, BrowserTabsChanged())
        self.control_requests.lapse(signal.team_id)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._resources.aclose()


def _wire_signals(host: HostServices) -> None:
    """Every subscription of the host: who follows which subsystem's changes."""
    on = host.signals.subscribe
    on(TabsChanged, host.tabs_changed)
    on(TabsChanged, host.live.tabs_changed)
    on(PageAttached, host.live.page_attached)
    on(ProtectionChanged, host.live.protection_changed)
    on(ProxyStatusChanged, host.proxies.status_changed)
    on(EgressOnline, host.proxies.status_changed)
    on(AgentDeleted, lambda s: host.threads.agent_deleted(s.team_id, s.agent_id))
    on(AgentDeleted, lambda s: host.memory_review.forget_agent(s.team_id, s.agent_id))
    on(AgentDeleted, lambda s: host.routines.agent_deleted(s.team_id, s.agent_id))
    on(AgentDeleted, lambda s: host.mcp_servers.agent_deleted(s.team_id, s.agent_id))
    on(AgentDeleted, lambda s: host.skills.agent_deleted(s.team_id, s.agent_id))
    on(AgentGone, lambda s: host.threads.agent_gone(s.team_id, s.agent_id))
    on(MemberRemoved, host.routines.member_removed)
    on(MemberRemoved, host.notifications.member_removed)
    on(MemberRemoved, host.threads.member_removed)
    on(MemberRemoved, host.browsing_steps.member_removed)
    on(McpServerChanged, host.mcp_sign_ins.server_changed)
    on(RoutineDeleted, host.routine_hooks.routine_deleted)
    on(TurnEnded, lambda s: host.memory_review.turns_ended(s.agent, s.thread_id))
    # In this order: the browsing memory keeps a step before a teach recording takes it.
    record = host.browsing_steps.record
    on(
        StepRecorded,
        lambda s: record(s.step.team_id, s.step.agent_id, s.step.line, thread_id=s.step.thread_id),
    )
    on(StepRecorded, lambda s: host.teaching.step(s.step))
    on(AttentionWaiting, host.notifications.attention_waiting)
    on(RunFinished, host.notifications.run_finished)
    on(BudgetReached, host.notifications.budget_reached)
    on(RunFinished, host.team_webhooks.run_finished)
    on(AttentionWaiting, host.team_webhooks.attention_waiting)


def _fields_of(*parts: Any) -> dict[str, Any]:
    return {f.name: getattr(part, f.name) for part in parts for f in fields(part)}


def _machinery(
    base: _Base,
    route_tables: Sequence[HostRouteTable],
    make_call: Callable[[PeerIdentity], HostCall],
    webhook_sender: WebhookSender | None,
) -> _Machinery:
    settings = base.settings.host
    # Read once: the host's own addresses, refused to browsers, web_fetch and proxies.
    own_addresses = interface_addresses()
    proxy_judge = ProxyAddressJudge(
        PublicOnlyPolicy.from_entries(settings.proxy_allowed_hosts, own_addresses=own_addresses)
    )
    signals = Signals()
    egress = EgressChannels(signals)
    browser = BrowserRuntime(
        settings,
        base.settings.data_dir,
        base.clock,
        base.db,
        own_addresses=own_addresses,
        proxy_judge=proxy_judge,
        computer_exit=egress.exit_for,
        signals=signals,
    )
    metrics = HostMetrics(tab_states=browser.tab_states)
    # The live view is a channel, not a route table: it is listed beside its registration.
    team_api = TeamApi(list(route_tables), also=LIVE_VIEW_CAPABILITIES)
    peers = PeerManager(base.identity, base.settings.rtc, base.clock, team_api, make_call, metrics)
    peers.register_channel(EGRESS_LABEL, egress.open)
    web = WebFetcher(
        PublicOnlyPolicy.from_entries(settings.web_fetch_allowed_hosts, own_addresses=own_addresses)
    )
    if webhook_sender is None:
        webhook_sender = WebhookSender(
            PublicOnlyPolicy.from_entries(
                settings.webhook_allowed_hosts, own_addresses=own_addresses
            )
        )
    return _Machinery(
        signals,
        egress,
        browser,
        metrics,
        team_api,
        peers,
        proxy_judge,
        web,
        webhook_sender,
        RemovalsHeard(),
    )


def _stores(base: _Base, machinery: _Machinery, search_endpoints: SearchEndpoints) -> _Stores:
    db, clock, secrets, announce = base.db, base.clock, base.secrets, machinery.peers.announce
    settings = base.settings
    # Where a team's model providers and SearXNG instance may be: public addresses, and
    # what the host's setting allows.
    services_policy = PublicOnlyPolicy.from_entries(
        settings.host.provider_allowed_hosts, own_addresses=interface_addresses()
    )
    return _Stores(
        memories=MemoryService(db, clock, announce),
        browsing_steps=BrowsingStepService(db, clock),
        providers=ProviderService(db, clock, secrets, announce, address_policy=services_policy),
        workspace=WorkspaceService(
            db,
            clock,
            Workspaces(settings.data_dir, WorkspaceLimits.from_settings(settings.host)),
            upload_seconds=settings.host.workspace_upload_seconds,
        ),
        tasks=TaskService(announce),
        vault=VaultService(db, clock, secrets, announce),
        web_search=WebSearchService(
            db, clock, secrets, search_endpoints, address_policy=services_policy
        ),
    )


def _browsing(base: _Base, machinery: _Machinery, stores: _Stores) -> _Browsing:
    browser, announce = machinery.browser, machinery.peers.announce
    profiles = BrowserProfileService(base.db, base.clock, browser, announce)
    proxies = ProxyService(
        base.db,
        base.clock,
        base.secrets,
        browser,
        browser.proxy_marks,
        announce,
        machinery.egress.online,
        judge=machinery.proxy_judge,
    )
    browser.use_proxies(proxies.plan_for)
    tabs = TabService(browser, profiles, base.settings.host.search_url)
    return _Browsing(profiles, tabs, proxies)


def _agents(base: _Base, machinery: _Machinery, stores: _Stores, browsing: _Browsing) -> _Agents:
    db, clock, host, announce = base.db, base.clock, base.settings.host, machinery.peers.announce
    agents = AgentService(
        db,
        clock,
        browsing.profiles,
        stores.memories,
        stores.providers,
        announce,
        stores.workspace,
        stores.tasks,
        stores.browsing_steps,
        signals=machinery.signals,
    )
    attention = AttentionRegistry(
        clock,
        announce,
        question_seconds=host.ask_user_seconds,
        db=db,
        signals=machinery.signals,
    )
    models = ModelProviders(
        stores.providers.credentials, address_policy=stores.providers.address_policy
    )
    skills = SkillService(db, clock, announce, agents.get_agent)
    tool_contexts = _tool_contexts(base, machinery, stores, browsing, attention, skills)
    mcp_servers = McpServerService(
        db,
        clock,
        base.secrets,
        McpConnections(
            announce,
            policy=PublicOnlyPolicy.from_entries(
                host.mcp_allowed_hosts, own_addresses=interface_addresses()
            ),
            idle_seconds=host.mcp_idle_seconds,
            start_seconds=host.mcp_start_seconds,
            stdio_teams=host.mcp_stdio_teams,
            sandbox=(
                StdioSandbox.from_settings(host.mcp_stdio_paths, network=host.mcp_stdio_network)
                if host.mcp_stdio_sandbox
                else None
            ),
        ),
        announce,
        base.settings.data_dir,
        machinery.signals,
    )
    usage = UsageService(db, clock, machinery.metrics)
    peers = machinery.peers
    budgets = BudgetService(
        db,
        clock,
        usage,
        machinery.signals,
        # The owners and admins connected now, besides whoever set the budget.
        admins=lambda team_id: [
            p.account_id for p in peers.team_peers(team_id) if p.role.at_least(Role.ADMIN)
        ],
    )
    threads = _threads(
        base,
        machinery,
        stores,
        agents,
        attention,
        models,
        tool_contexts,
        mcp_servers,
        UsageMeters(usage, budgets),
        skills,
    )
    memory_review = MemoryReview(
        stores.memories,
        models.resolve,
        threads.transcript,
        delay=host.memory_review_seconds,
        steps=stores.browsing_steps,
        thread_member=threads.private_member,
        propose_skill=skills.propose,
        # Its requests are recorded and checked against budgets like a turn's.
        meters=UsageMeters(usage, budgets),
    )
    handoff = SecretHandoffService(attention, stores.vault)
    routines = RoutineService(
        db,
        clock,
        agents.get_agent,
        threads,
        announce,
        machinery.signals,
        removals=machinery.removals,
    )
    outbox = HubOutbox()
    routine_hooks = RoutineHookService(
        db, clock, base.secrets, outbox, runs=RoutinesForHooks(routines)
    )
    team_webhooks = TeamWebhookService(
        db,
        clock,
        base.secrets,
        machinery.webhook_sender,
        link=app_link(base.settings.hub.public_url),
    )
    return _Agents(
        agents,
        skills,
        attention,
        handoff,
        models,
        tool_contexts,
        threads,
        memory_review,
        routines,
        RoutineScheduler(routines, clock),
        outbox,
        routine_hooks,
        team_webhooks,
        McpEndpoint(
            tool_contexts,
            attention,
            outbox,
            agents,
            threads,
            base.clock,
            public_url=base.settings.hub.public_url,
        ),
        mcp_servers,
        McpSignIns(mcp_servers, machinery.browser),
        usage,
        budgets,
        AgentTemplateService(
            clock,
            agents,
            stores.providers,
            skills,
            routines,
            mcp_servers,
            stores.memories,
            stores.workspace,
        ),
    )


def _tool_contexts(
    base: _Base,
    machinery: _Machinery,
    stores: _Stores,
    browsing: _Browsing,
    attention: AttentionRegistry,
    skills: SkillService,
) -> ToolContextFactory:
    return ToolContextFactory(
        machinery.browser,
        base.settings.host,
        stores.memories,
        browsing.profiles,
        browsing.proxies,
        stores.workspace,
        machinery.web,
        stores.web_search,
        stores.vault,
        machinery.peers.announce,
        attention.ask_person,
        skills,
    )


def _threads(
    base: _Base,
    machinery: _Machinery,
    stores: _Stores,
    agents: AgentService,
    attention: AttentionRegistry,
    models: ModelProviders,
    tool_contexts: ToolContextFactory,
    mcp_servers: McpServerService,
    meters: UsageMeters,
    skills: SkillService,
) -> ThreadService:
    slots = TurnSlots(base.settings.host.team_running_turns)
    machinery.metrics.turns_waiting = slots.waiting
    return ThreadService(
        base.db,
        base.clock,
        agents,
        attention,
        machinery.peers.announce,
        models.resolve,
        tool_contexts,
        stores.providers.record_error,
        stores.tasks,
        stores.workspace,
        attachment_max_bytes=base.settings.host.attachment_max_bytes,
        signals=machinery.signals,
        metrics=machinery.metrics,
        memories=stores.memories,
        memory_prompt_tokens=base.settings.host.memory_prompt_tokens,
        mcp_tools=mcp_servers.turn_tools,
        usage=meters,
        skills=skills,
        slots=slots,
        removals=machinery.removals,
    )


def _people(base: _Base, machinery: _Machinery, stores: _Stores, agents: _Agents) -> _People:
    browser, clock = machinery.browser, base.clock
    live = LiveViews(browser, base.settings.host, read_press, machinery.metrics, machinery.signals)
    machinery.peers.register_channel(VIEW_PREFIX, live.open)
    teaching = TeachingService(clock, browser, live, agents.threads, stores.workspace)
    requests = ControlRequestService(browser, live, clock, machinery.peers.announce)
    mail = MailServer(base.db, clock, base.secrets)
    public_url = base.settings.hub.public_url
    notifications = NotificationService(
        base.db,
        clock,
        machinery.peers.announce,
        machinery.signals,
        mail,
        app_url=f"{public_url.rstrip('/')}/app/" if public_url else "/app/",
    )
    return _People(live, teaching, requests, mail, notifications)
