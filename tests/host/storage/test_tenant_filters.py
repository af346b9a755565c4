"""The host's repositories never reach across teams.

Both teams have rows of every kind; every read, update and delete is called as team A with
team B's ids (and a member of both teams), and must find nothing of B's and change none of
B's rows. Every public method of every repository is either called here or named in
``HOST_WIDE`` with the reason it walks all teams: a new method fails this test until it is.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa

import server.host.storage
from server.db.engine import Database
from server.db.tables import PROVIDER_API_KEY, metadata
from server.host.storage.agents import Agent, AgentBrowserChoice, AgentRepository
from server.host.storage.attention import AttentionRepository, StoredRequest
from server.host.storage.browsing_steps import BrowsingStep, BrowsingStepRepository
from server.host.storage.ciphertexts import CiphertextRepository, StoredCiphertext
from server.host.storage.mcp_servers import McpAgentLink, McpServerRepository, McpServerRow
from server.host.storage.memories import AgentMemory, AgentMemoryRepository, MemoryQuery
from server.host.storage.notifications import (
    Notification,
    NotificationRepository,
    PreferencesRepository,
    PreferencesRow,
    SmtpRepository,
    SmtpRow,
)
from server.host.storage.profiles import BrowserProfile, BrowserProfileRepository
from server.host.storage.providers import ProviderRepository, ProviderRow
from server.host.storage.proxies import ProxyRepository, ProxyRow
from server.host.storage.queued_messages import QueuedMessage, QueuedMessageRepository
from server.host.storage.read_cursors import ReadCursorRepository
from server.host.storage.routine_hooks import HookRow, RoutineHookRepository
from server.host.storage.routines import Routine, RoutineRepository, RoutineRun
from server.host.storage.skills import Skill, SkillRepository, SkillVersion
from server.host.storage.suspended_turns import SuspendedTurn, SuspendedTurnRepository
from server.host.storage.team_webhooks import DeliveryRow, TeamWebhookRepository, TeamWebhookRow
from server.host.storage.threads import StoredMessage, Thread, ThreadRepository, Turn
from server.host.storage.usage import (
    BudgetRow,
    ModelRequestRow,
    PriceRow,
    UsageRepository,
    UsageSettingsRow,
)
from server.host.storage.vault import VaultItemRow, VaultRepository
from server.host.storage.web_search import WebSearchRepository, WebSearchRow
from tests.support.databases import ScratchDatabase

TEAM_A, TEAM_B = "a" * 32, "b" * 32
# A person in both teams.
MEMBER = "m" * 32
SITE = "example.com"

R = TypeVar("R")

# The methods each test below calls as team A.
COVERED: dict[type, frozenset[str]] = {
    AgentRepository: frozenset(
        {
            "get_agent",
            "add_agent",
            "get_full_agent",
            "list_agents",
            "count_agents",
            "add_full_agent",
            "update_agent",
            "remove_agent",
            "list_agents_of_profile",
            "names_of_agents_using_provider",
            "update_agent_profile",
            "update_agents_of_profile_to_shared",
        }
    ),
    BrowsingStepRepository: frozenset(
        {
            "get_enabled",
            "set_enabled",
            "add_step",
            "list_steps",
            "remove_steps",
            "remove_steps_before",
            "remove_agent_steps",
            "remove_member_steps",
            "remove_team_steps",
        }
    ),
    CiphertextRepository: frozenset({"update_ciphertext"}),
    AgentMemoryRepository: frozenset(
        {
            "add_memory",
            "get_memory",
            "list_memories",
            "list_scope_memories",
            "find_memories",
            "list_prompt_memories",
            "list_prompt_rows",
            "list_site_memories",
            "count_memories",
            "update_memory",
            "set_pinned",
            "add_uses",
            "remove_memory",
            "remove_memories",
            "remove_agent_memories",
        }
    ),
    BrowserProfileRepository: frozenset(
        {"list_profiles", "get_profile", "add_profile", "update_profile", "remove_profile"}
    ),
    ProviderRepository: frozenset(
        {"list_providers", "get_provider", "add_provider", "update_provider", "remove_provider"}
    ),
    ProxyRepository: frozenset(
        {
            "list_proxies",
            "get_proxy",
            "get_computer",
            "add_proxy",
            "update_proxy",
            "remove_proxy",
            "profile_choices",
            "get_profile_proxy",
            "set_profile_proxy",
        }
    ),
    ThreadRepository: frozenset(
        {
            "get_thread",
            "list_threads",
            "add_thread",
            "update_thread",
            "list_thread_ids_of_agent",
            "list_child_threads",
            "remove_threads_of_agent",
            "list_messages",
            "next_seq",
            "add_messages",
            "add_turn",
            "update_turn",
            "list_turns",
        }
    ),
    VaultRepository: frozenset(
        {"list_marked", "count_items", "get_item", "add_item", "update_item", "remove_item"}
    ),
    WebSearchRepository: frozenset({"get_settings", "update_settings", "remove_settings"}),
    McpServerRepository: frozenset(
        {
            "list_servers",
            "get_server",
            "get_server_named",
            "add_server",
            "update_server",
            "update_server_if",
            "remove_server",
            "list_links",
            "list_servers_of_agent",
            "set_link",
            "remove_link",
            "remove_links_of_agent",
        }
    ),
    SkillRepository: frozenset(
        {
            "list_skills",
            "get_skill_by_name",
            "add_skill",
            "update_skill",
            "remove_skill",
            "add_version",
            "list_versions",
            "get_files",
            "get_file",
            "add_agent_skill",
            "remove_agent_skill",
            "remove_agent_skills",
            "list_enabled",
            "get_enabled_skill",
            "list_agents_of_skill",
        }
    ),
    UsageRepository: frozenset(
        {
            "add_requests",
            "add_rollups",
            "list_totals",
            "get_spent",
            "list_request_times",
            "update_days",
            "get_settings",
            "update_settings",
            "list_prices",
            "add_price",
            "remove_price",
            "list_budgets",
            "get_budget",
            "add_budget",
            "update_budget",
            "remove_budget",
            "update_warned",
        }
    ),
    TeamWebhookRepository: frozenset(
        {
            "list_webhooks",
            "get_webhook",
            "add_webhook",
            "update_webhook",
            "remove_webhook",
            "add_delivery",
            "get_delivery",
            "list_deliveries",
            "claim_delivery",
            "update_delivery",
        }
    ),
    RoutineRepository: frozenset(
        {
            "add_routine",
            "get_routine",
            "list_routines",
            "list_team_routines",
            "update_routine",
            "update_thread_id",
            "update_creator_left",
            "remove_routine",
            "remove_routines_of_agent",
            "update_fire_times",
            "add_run",
            "add_runs",
            "get_run",
            "get_run_by_delivery",
            "list_runs",
            "list_unfinished_runs",
            "list_unfinished_runs_of",
            "update_run",
            "take_queued_run",
        }
    ),
    RoutineHookRepository: frozenset(
        {
            "add_hook",
            "get_hook",
            "list_hooks",
            "update_hook",
            "remove_hook",
            "get_taken",
            "add_taken",
        }
    ),
    NotificationRepository: frozenset(
        {
            "add_notifications",
            "list_notifications",
            "get_notification",
            "count_unread",
            "update_read",
            "list_digest_pending",
            "update_digest_sent",
            "remove_member",
        }
    ),
    PreferencesRepository: frozenset(
        {
            "get_preferences",
            "list_preferences",
            "update_preferences",
            "update_digest_at",
            "remove_member",
        }
    ),
    SmtpRepository: frozenset({"get_smtp", "update_smtp", "remove_smtp"}),
    AttentionRepository: frozenset({"add_request", "get_request", "update_ended"}),
    QueuedMessageRepository: frozenset(
        {
            "add_message",
            "take_message",
            "list_messages",
            "count_messages",
            "get_message",
            "update_message",
            "remove_message",
            "remove_sender_messages",
        }
    ),
    ReadCursorRepository: frozenset({"update_cursor", "count_unread"}),
    SuspendedTurnRepository: frozenset({"add_turn"}),
}

# The queries that walk every team on purpose, and why.
HOST_WIDE: dict[type, dict[str, str]] = {
    CiphertextRepository: {
        # Start-up refuses a missing key ring while any team's secret was sealed with one.
        "has_ciphertexts": "whether the host's one key ring sealed anything, in any team",
        # Rotation, key usage and the check re-seal or open every team's secrets in batches.
        "list_ciphertexts": "the host's one key ring seals every team's secrets",
    },
    BrowserProfileRepository: {
        # At start the browser restores every team's saved tabs, each into its profile.
        "list_profile_keys_of_every_team": "saved tabs of all teams are restored at start",
    },
    TeamWebhookRepository: {
        # The host's one sender works through every team's due deliveries; each claim and
        # outcome then names the delivery's own team.
        "list_due": "the one sender attempts every team's due deliveries",
        "next_due_at": "the one sender sleeps until any team's next delivery is due",
        "remove_finished_deliveries": "old delivered and failed deliveries leave every log",
    },
    ThreadRepository: {
        # A host starting over has no task running any turn a former run left, in any team.
        "update_running_turns": "at start, every team's turns left running end interrupted",
    },
    QueuedMessageRepository: {
        # A host starting over starts the oldest queued message of every team's idle threads.
        "list_queued_threads": "at start, every team's waiting queues start their turns",
        "list_every_sender": "as a link begins, the hub is asked which members named left",
    },
    SuspendedTurnRepository: {
        # A host starting over takes up every team's turns its former run put aside.
        "take_every_turn": "at start, every team's turns put aside are taken up",
    },
    RoutineRepository: {
        # The host's one scheduler finds every team's due routines; each fire time it moves
        # after names the routine's own team.
        "list_due_for_update": "the one scheduler fires every team's due routines",
        "get_earliest_fire": "the one scheduler sleeps until any team's next routine is due",
        # A host starting over settles the runs every team had under way when it stopped.
        "list_all_unfinished_runs": "at start, every team's unfinished runs are settled",
        "list_named_members": "as a link begins, the hub is asked which members named left",
    },
    RoutineHookRepository: {
        # The host's link tells its hub of every team's hooks, so deliveries reach it.
        "list_every_hook": "the host registers every team's hooks with its hub on link",
    },
    NotificationRepository: {
        # The hourly digest timer finds who has a digest waiting (ids only); each read
        # and write after it names the team and the member.
        "list_digest_members": "the one digest timer finds every team's waiting digests",
    },
    PreferencesRepository: {
        # The host's link asks its hub which members with email choices left their team.
        "list_every_member": "as a link begins, the hub is asked which members named left",
    },
    AttentionRepository: {
        # A host starting over has no turn waiting on any request, in any team.
        "update_all_waiting": "at start, every team's waiting requests end interrupted",
    },
}


def public_methods(cls: type) -> frozenset[str]:
    return frozenset(
        name
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    )


def host_repositories() -> set[type]:
    found: set[type] = set()
    for module_info in pkgutil.iter_modules(server.host.storage.__path__):
        module = importlib.import_module(f"server.host.storage.{module_info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if name.endswith("Repository") and cls.__module__ == module.__name__:
                found.add(cls)
    return found


class Calls:
    """Which methods of the watched repositories a test called."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def watch(self, repo: R) -> R:
        for name in public_methods(type(repo)):
            setattr(repo, name, self._recording(name, getattr(repo, name)))
        return repo

    def _recording(
        self, name: str, method: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            self.names.add(name)
            return await method(*args, **kwargs)

        return call


async def team_rows(db: Database, team_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of ``team_id`` in every table that has a team, as plain data."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    async with db.read() as conn:
        for table in metadata.sorted_tables:
            if "team_id" in table.c:
                result = await conn.execute(sa.select(table).where(table.c.team_id == team_id))
                rows[table.name] = sorted((tuple(row) for row in result), key=repr)
    return rows


def agent(team: str, s: str) -> Agent:
    return Agent(
        f"agent-{s}",
        team,
        "Agent",
        "",
        f"prov-{s}",
        None,
        {},
        None,
        False,
        f"profile-{s}",
        1.0,
        None,
    )


def provider(team: str, provider_id: str) -> ProviderRow:
    return ProviderRow(
        team,
        provider_id,
        "custom",
        provider_id,
        "http://x.test/v1",
        "m",
        ("m",),
        b"key",
        None,
        1.0,
        1.0,
    )


def proxy(team: str, proxy_id: str) -> ProxyRow:
    return ProxyRow(
        proxy_id, team, "http", "http", "proxy.test", 8080, "u", b"pw", None, None, 1.0, 1.0
    )


def mcp_server(team: str, server_id: str) -> McpServerRow:
    return McpServerRow(
        server_id,
        team,
        f"tracker-{server_id}",
        "stdio",
        "tracker",
        ("--quiet",),
        None,
        ("TOKEN",),
        b"sealed",
        60.0,
        True,
        MEMBER,
        1.0,
        1.0,
    )


def webhook(team: str, webhook_id: str) -> TeamWebhookRow:
    return TeamWebhookRow(
        webhook_id,
        team,
        "Ops",
        "https://hooks.test",
        b"path",
        "standard",
        ("run.failed",),
        b"secret",
        None,
        None,
        True,
        MEMBER,
        1.0,
        1.0,
    )


def delivery(team: str, delivery_id: str, webhook_id: str) -> DeliveryRow:
    return DeliveryRow(
        delivery_id,
        team,
        webhook_id,
        "run.failed",
        "{}",
        "pending",
        0,
        6,
        5.0,
        None,
        None,
        1.0,
        1.0,
    )


def routine(team: str, routine_id: str, agent_id: str) -> Routine:
    return Routine(
        routine_id,
        team,
        agent_id,
        MEMBER,
        "Daily",
        "Report",
        {"kind": "interval", "seconds": 3600},
        "new",
        None,
        "team",
        (),
        (),
        86400,
        "skip",
        "once",
        True,
        5.0,
        1.0,
        1.0,
    )


def run(team: str, run_id: str, routine_id: str, agent_id: str) -> RoutineRun:
    return RoutineRun(
        run_id,
        team,
        routine_id,
        agent_id,
        "webhook",
        "queued",
        None,
        5.0,
        1.0,
        None,
        None,
        None,
        None,
        None,
        f"delivery-{run_id}",
        "{}",
    )


def routine_hook(team: str, hook_id: str, routine_id: str) -> HookRow:
    return HookRow(hook_id, team, routine_id, MEMBER, b"secret", None, None, {}, True, 1.0, None)


def notification(team: str, notification_id: str, agent_id: str) -> Notification:
    return Notification(
        notification_id,
        team,
        MEMBER,
        "runFinished",
        "Done",
        "The run ended",
        agent_id,
        None,
        None,
        None,
        None,
        1.0,
        digest_pending=True,
    )


def model_request(team: str, request_id: str, agent_id: str) -> ModelRequestRow:
    return ModelRequestRow(
        request_id,
        team,
        agent_id,
        None,
        None,
        MEMBER,
        "",
        "anthropic",
        "claude-x",
        100,
        10,
        0,
        0,
        0,
        5,
        "ok",
        2_000,
        1.0,
        "2026-01-01",
    )


def price(team: str, price_id: str) -> PriceRow:
    return PriceRow(price_id, team, "anthropic", "claude-x", 0.0, "1", "2", "0", "0", MEMBER, 1.0)


def budget(team: str, budget_id: str) -> BudgetRow:
    return BudgetRow(
        budget_id,
        team,
        "Monthly",
        "team",
        "",
        "month",
        None,
        None,
        "cost",
        1_000_000,
        None,
        MEMBER,
        MEMBER,
        1.0,
        1.0,
    )


def preferences(team: str) -> PreferencesRow:
    return PreferencesRow(
        team, MEMBER, "m@example.com", "immediately", "immediately", "digest", "digest", 1.0
    )


def smtp(team: str) -> SmtpRow:
    return SmtpRow(team, "smtp.test", 587, "starttls", "u", b"pw", "crew@example.com", 1.0)


def attention(team: str, request_id: str, thread_id: str, agent_id: str) -> StoredRequest:
    return StoredRequest(
        request_id,
        team,
        thread_id,
        agent_id,
        None,
        "consent",
        "click",
        "Click Buy",
        (MEMBER,),
        False,
        1.0,
        100.0,
        "waiting",
    )


def queued(team: str, message_id: str, thread_id: str) -> QueuedMessage:
    return QueuedMessage(message_id, team, thread_id, MEMBER, "next", "[]", False, 1.0, 1.0)


def thread(team: str, thread_id: str, agent_id: str) -> Thread:
    return Thread(thread_id, team, agent_id, MEMBER, False, "T", 1.0, 1.0)


def turn(team: str, turn_id: str, thread_id: str) -> Turn:
    return Turn(turn_id, team, thread_id, "done", None, 0, 0, 0, 1.0, 2.0)


def item(team: str, item_id: str) -> VaultItemRow:
    unset = dict.fromkeys(
        ("username", "notes", "cardholder", "expiry", "billing_address", "card_last4"), None
    )
    unset |= dict.fromkeys(("card_brand", "email", "phone", "postal_address"), None)
    unset |= dict.fromkeys(("totp_secret", "card_number", "security_code"), None)
    return VaultItemRow(
        team_id=team,
        id=item_id,
        kind="login",
        name="Bank",
        sites=(SITE,),
        created_at=1.0,
        updated_at=1.0,
        password=b"pw",
        **unset,
    )


async def seed(db: Database) -> None:
    async with db.write() as conn:
        for team, s in ((TEAM_A, "a"), (TEAM_B, "b")):
            await AgentRepository().add_full_agent(conn, agent(team, s))
            await BrowserProfileRepository().add_profile(
                conn, BrowserProfile(f"profile-{s}", team, "Work", 10, 1.0)
            )
            await ProviderRepository().add_provider(conn, provider(team, f"prov-{s}"))
            proxies = ProxyRepository()
            await proxies.add_proxy(conn, proxy(team, f"proxy-{s}"))
            await proxies.add_proxy(
                conn, replace(proxy(team, f"computer-{s}"), kind="computer", member_id=MEMBER)
            )
            await proxies.set_profile_proxy(conn, team, f"profile-{s}", f"proxy-{s}")
            threads = ThreadRepository()
            await threads.add_thread(conn, thread(team, f"thread-{s}", f"agent-{s}"))
            # A thread an ask_agent call of thread-b started (its parent named loosely).
            await threads.add_thread(
                conn,
                replace(
                    thread(team, f"asked-{s}", f"agent-{s}"),
                    parent_thread_id="thread-b",
                    parent_agent_id=f"agent-{s}",
                ),
            )
            await threads.add_messages(
                conn, [StoredMessage(f"msg-{s}", team, f"thread-{s}", 0, "user", "{}", 1.0)]
            )
            await threads.add_turn(conn, turn(team, f"turn-{s}", f"thread-{s}"))
            memories = AgentMemoryRepository()
            await memories.add_memory(
                conn, AgentMemory(f"mem-{s}", team, f"agent-{s}", None, "kept", 1.0)
            )
            await memories.add_memory(
                conn,
                AgentMemory(f"site-{s}", team, f"agent-{s}", SITE, "at the site", 1.0, MEMBER),
            )
            await VaultRepository().add_item(conn, item(team, f"item-{s}"))
            await WebSearchRepository().update_settings(
                conn, WebSearchRow(team, "brave", None, None, b"key", 1.0)
            )
            skills = SkillRepository()
            await skills.add_skill(conn, skill(team, f"skill-{s}"), "---", [])
            await skills.add_version(conn, skill_version(team, f"skill-{s}"), {"SKILL.md": b"---"})
            await skills.add_agent_skill(conn, team, f"agent-{s}", f"skill-{s}", 1.0, MEMBER)
            mcp = McpServerRepository()
            await mcp.add_server(conn, mcp_server(team, f"mcp-{s}"))
            await mcp.set_link(conn, McpAgentLink(team, f"mcp-{s}", f"agent-{s}", ("echo",)))
            hooks = TeamWebhookRepository()
            await hooks.add_webhook(conn, webhook(team, f"hook-{s}"))
            await hooks.add_delivery(conn, delivery(team, f"dlv-{s}", f"hook-{s}"))
            routines = RoutineRepository()
            await routines.add_routine(conn, routine(team, f"routine-{s}", f"agent-{s}"))
            await routines.add_run(conn, run(team, f"run-{s}", f"routine-{s}", f"agent-{s}"))
            routine_hooks = RoutineHookRepository()
            await routine_hooks.add_hook(conn, routine_hook(team, f"rhook-{s}", f"routine-{s}"))
            await routine_hooks.add_taken(
                conn, team, f"taken-{s}", f"rhook-{s}", f"routine-{s}", 1.0, 1.0
            )
            await NotificationRepository().add_notifications(
                conn, [notification(team, f"note-{s}", f"agent-{s}")]
            )
            await PreferencesRepository().update_preferences(conn, preferences(team))
            await SmtpRepository().update_smtp(conn, smtp(team))
            await AttentionRepository().add_request(
                conn, attention(team, f"ask-{s}", f"thread-{s}", f"agent-{s}")
            )
            await QueuedMessageRepository().add_message(
                conn, queued(team, f"queued-{s}", f"thread-{s}")
            )
            await ReadCursorRepository().update_cursor(conn, team, f"thread-{s}", MEMBER, 1.5)
            await SuspendedTurnRepository().add_turn(
                conn, suspended(team, f"turn-{s}", f"thread-{s}", f"agent-{s}")
            )
            usage = UsageRepository()
            await usage.add_requests(conn, [model_request(team, f"req-{s}", f"agent-{s}")])
            await usage.update_settings(conn, UsageSettingsRow(team, "UTC", "USD", "1", 1.0))
            await usage.add_price(conn, price(team, f"price-{s}"))
            await usage.add_budget(conn, budget(team, f"budget-{s}"))
            steps = BrowsingStepRepository()
            await steps.set_enabled(conn, team, True, 1.0)
            await steps.add_step(
                conn, BrowsingStep(f"step-{s}", team, f"agent-{s}", "opened", 1.0), keep=10
            )


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    await seed(opened)
    yield opened
    await opened.close()


@pytest.fixture
async def untouched(db: Database) -> AsyncIterator[None]:
    """Fails the test if anything of team B's changed while it ran."""
    before = await team_rows(db, TEAM_B)
    yield
    assert await team_rows(db, TEAM_B) == before


@pytest.fixture
def calls() -> Calls:
    return Calls()


def test_every_repository_method_is_covered_or_named_host_wide() -> None:
    assert host_repositories() == set(COVERED)
    for cls, covered in COVERED.items():
        host_wide = frozenset(HOST_WIDE.get(cls, {}))
        assert not covered & host_wide, cls.__name__
        assert public_methods(cls) == covered | host_wide, cls.__name__


@pytest.mark.usefixtures("untouched")
async def test_agents(db: Database, calls: Calls) -> None:
    repo = calls.watch(AgentRepository())
    async with db.write() as conn:
        assert await repo.get_agent(conn, TEAM_A, "agent-b") is None
        assert await repo.get_full_agent(conn, TEAM_A, "agent-b") is None
        assert [a.id for a in await repo.list_agents(conn, TEAM_A)] == ["agent-a"]
        assert await repo.count_agents(conn, TEAM_A) == 1
        assert await repo.list_agents_of_profile(conn, TEAM_A, "profile-b") == []
        assert await repo.names_of_agents_using_provider(conn, TEAM_A, "prov-b") == []
        await repo.update_agent(conn, replace(agent(TEAM_A, "b"), name="Taken"))
        await repo.update_agent_profile(
            conn, TEAM_A, "agent-b", own_browser_session=True, browser_profile_id=None
        )
        await repo.update_agents_of_profile_to_shared(conn, TEAM_A, "profile-b")
        await repo.remove_agent(conn, TEAM_A, "agent-b")
        await repo.add_agent(conn, AgentBrowserChoice("agent-a2", TEAM_A, "Two", False, None), 2.0)
        await repo.add_full_agent(conn, replace(agent(TEAM_A, "a3"), browser_profile_id=None))
        assert await repo.count_agents(conn, TEAM_A) == 3
    assert calls.names == COVERED[AgentRepository]


@pytest.mark.usefixtures("untouched")
async def test_browsing_steps(db: Database, calls: Calls) -> None:
    repo = calls.watch(BrowsingStepRepository())
    async with db.write() as conn:
        assert await repo.list_steps(conn, TEAM_A, "agent-b", since=0.0) == []
        await repo.add_step(conn, BrowsingStep("step-a2", TEAM_A, "agent-b", "x", 3.0), keep=0)
        await repo.remove_steps(conn, TEAM_A, "agent-b", ["step-b"])
        await repo.remove_steps_before(conn, TEAM_A, "agent-b", 1e12)
        await repo.remove_agent_steps(conn, TEAM_A, "agent-b")
        await repo.remove_member_steps(conn, TEAM_A, MEMBER)
        assert await repo.get_enabled(conn, TEAM_A)
        await repo.set_enabled(conn, TEAM_A, False, 2.0)
        assert not await repo.get_enabled(conn, TEAM_A)
        await repo.remove_team_steps(conn, TEAM_A)
        assert await repo.list_steps(conn, TEAM_A, "agent-a", since=0.0) == []
    assert calls.names == COVERED[BrowsingStepRepository]


@pytest.mark.usefixtures("untouched")
async def test_ciphertexts(db: Database, calls: Calls) -> None:
    repo = calls.watch(CiphertextRepository())
    async with db.write() as conn:
        # Team B's row id under team A's name, with the very ciphertext B stores.
        stored = StoredCiphertext(TEAM_A, "prov-b", b"key")
        assert not await repo.update_ciphertext(conn, PROVIDER_API_KEY, stored, b"other")
        mine = StoredCiphertext(TEAM_A, "prov-a", b"key")
        assert await repo.update_ciphertext(conn, PROVIDER_API_KEY, mine, b"other")
    assert calls.names == COVERED[CiphertextRepository]


@pytest.mark.usefixtures("untouched")
async def test_memories(db: Database, calls: Calls) -> None:
    repo = calls.watch(AgentMemoryRepository())
    async with db.write() as conn:
        assert await repo.get_memory(conn, TEAM_A, "agent-b", "mem-b") is None
        assert await repo.get_memory(conn, TEAM_A, "agent-a", "mem-b") is None
        assert await repo.list_memories(conn, TEAM_A, "agent-b") == []
        assert await repo.list_memories(conn, TEAM_A, "agent-b", member_id=MEMBER) == []
        assert await repo.list_scope_memories(conn, TEAM_A, "agent-b", MEMBER) == []
        query = MemoryQuery(text="kept", visible_to=MEMBER)
        assert await repo.find_memories(conn, TEAM_A, "agent-b", query) == ([], 0)
        assert await repo.find_memories(conn, TEAM_A, "agent-b", MemoryQuery(site=SITE)) == ([], 0)
        assert await repo.list_prompt_memories(conn, TEAM_A, "agent-b", MEMBER) == []
        assert await repo.list_prompt_rows(conn, TEAM_A, "agent-b") == []
        sites = await repo.list_site_memories(
            conn, TEAM_A, "agent-b", [SITE], limit=10, member_id=MEMBER
        )
        assert sites == []
        assert await repo.count_memories(conn, TEAM_A, "agent-b") == 0
        assert not await repo.update_memory(conn, TEAM_A, "mem-b", text="x", site=None, now=2.0)
        assert not await repo.set_pinned(conn, TEAM_A, "mem-b", True, 2.0, MEMBER)
        await repo.add_uses(conn, TEAM_A, ["mem-b", "site-b"], 2.0)
        assert not await repo.remove_memory(conn, TEAM_A, "mem-b")
        assert await repo.remove_memories(conn, TEAM_A, "agent-b", ["mem-b"]) == 0
        assert await repo.remove_memories(conn, TEAM_A, "agent-a", ["mem-b", "site-b"]) == 0
        assert await repo.remove_agent_memories(conn, TEAM_A, "agent-b") == 0
        await repo.add_memory(conn, AgentMemory("mem-a2", TEAM_A, "agent-b", None, "x", 2.0))
        assert await repo.count_memories(conn, TEAM_A, "agent-a") == 2
    assert calls.names == COVERED[AgentMemoryRepository]


@pytest.mark.usefixtures("untouched")
async def test_profiles(db: Database, calls: Calls) -> None:
    repo = calls.watch(BrowserProfileRepository())
    async with db.write() as conn:
        assert [p.id for p in await repo.list_profiles(conn, TEAM_A)] == ["profile-a"]
        assert await repo.get_profile(conn, TEAM_A, "profile-b") is None
        await repo.update_profile(conn, TEAM_A, "profile-b", name="Taken", hue=1)
        await repo.remove_profile(conn, TEAM_A, "profile-b")
        await repo.add_profile(conn, BrowserProfile("profile-a2", TEAM_A, "Home", 1, 2.0))
    assert calls.names == COVERED[BrowserProfileRepository]


@pytest.mark.usefixtures("untouched")
async def test_providers(db: Database, calls: Calls) -> None:
    repo = calls.watch(ProviderRepository())
    async with db.write() as conn:
        assert [p.id for p in await repo.list_providers(conn, TEAM_A)] == ["prov-a"]
        assert await repo.get_provider(conn, TEAM_A, "prov-b") is None
        await repo.update_provider(conn, TEAM_A, "prov-b", api_key=None, models=["z"])
        await repo.remove_provider(conn, TEAM_A, "prov-b")
        await repo.add_provider(conn, provider(TEAM_A, "prov-a2"))
    assert calls.names == COVERED[ProviderRepository]


@pytest.mark.usefixtures("untouched")
async def test_proxies(db: Database, calls: Calls) -> None:
    repo = calls.watch(ProxyRepository())
    async with db.write() as conn:
        assert {p.id for p in await repo.list_proxies(conn, TEAM_A)} == {"proxy-a", "computer-a"}
        assert await repo.get_proxy(conn, TEAM_A, "proxy-b") is None
        computer = await repo.get_computer(conn, TEAM_A, MEMBER)
        assert computer is not None
        assert computer.id == "computer-a"
        assert await repo.profile_choices(conn, TEAM_A) == {"profile-a": "proxy-a"}
        assert await repo.get_profile_proxy(conn, TEAM_A, "profile-b") is None
        await repo.update_proxy(conn, TEAM_A, "proxy-b", host="elsewhere.test")
        await repo.set_profile_proxy(conn, TEAM_A, "profile-b", None)
        await repo.set_profile_proxy(conn, TEAM_A, "profile-b", "proxy-a")
        await repo.set_profile_proxy(conn, TEAM_A, "profile-a", "proxy-b")
        assert await repo.get_profile_proxy(conn, TEAM_A, "profile-a") is None
        await repo.remove_proxy(conn, TEAM_A, "proxy-b")
        await repo.add_proxy(conn, proxy(TEAM_A, "proxy-a2"))
    assert calls.names == COVERED[ProxyRepository]


@pytest.mark.usefixtures("untouched")
async def test_threads(db: Database, calls: Calls) -> None:
    repo = calls.watch(ThreadRepository())
    async with db.write() as conn:
        assert await repo.get_thread(conn, TEAM_A, "thread-b") is None
        assert await repo.list_threads(conn, TEAM_A, "agent-b", MEMBER) == []
        assert await repo.list_thread_ids_of_agent(conn, TEAM_A, "agent-b") == []
        assert [t.id for t in await repo.list_child_threads(conn, TEAM_A, "thread-b")] == [
            "asked-a"
        ]
        assert await repo.list_messages(conn, TEAM_A, "thread-b") == []
        assert await repo.next_seq(conn, TEAM_A, "thread-b") == 0
        assert await repo.list_turns(conn, TEAM_A, "thread-b") == []
        await repo.update_thread(
            conn, TEAM_A, "thread-b", updated_at=9.0, shared=True, title="Taken"
        )
        await repo.update_turn(conn, replace(turn(TEAM_A, "turn-b", "thread-b"), status="error"))
        await repo.remove_threads_of_agent(conn, TEAM_A, "agent-b")
        await repo.add_thread(conn, thread(TEAM_A, "thread-a2", "agent-a"))
        await repo.add_messages(
            conn, [StoredMessage("msg-a2", TEAM_A, "thread-a", 1, "user", "{}", 2.0)]
        )
        await repo.add_turn(conn, turn(TEAM_A, "turn-a2", "thread-a"))
        assert await repo.next_seq(conn, TEAM_A, "thread-a") == 2
    assert calls.names == COVERED[ThreadRepository]


@pytest.mark.usefixtures("untouched")
async def test_vault(db: Database, calls: Calls) -> None:
    repo = calls.watch(VaultRepository())
    async with db.write() as conn:
        listed, total = await repo.list_marked(conn, TEAM_A)
        assert ([i.id for i in listed], total) == (["item-a"], 1)
        assert await repo.count_items(conn, TEAM_A) == 1
        assert await repo.get_item(conn, TEAM_A, "item-b") is None
        await repo.update_item(conn, TEAM_A, "item-b", name="Taken", password=None)
        assert not await repo.remove_item(conn, TEAM_A, "item-b")
        await repo.add_item(conn, item(TEAM_A, "item-a2"))
    assert calls.names == COVERED[VaultRepository]


@pytest.mark.usefixtures("untouched")
async def test_web_search(db: Database, calls: Calls) -> None:
    repo = calls.watch(WebSearchRepository())
    async with db.write() as conn:
        mine = await repo.get_settings(conn, TEAM_A)
        assert mine is not None
        assert mine.team_id == TEAM_A
        await repo.update_settings(conn, replace(mine, engine="google", api_key=None))
        await repo.remove_settings(conn, TEAM_A)
        assert await repo.get_settings(conn, TEAM_A) is None
    assert calls.names == COVERED[WebSearchRepository]


@pytest.mark.usefixtures("untouched")
async def test_mcp_servers(db: Database, calls: Calls) -> None:
    repo = calls.watch(McpServerRepository())
    async with db.write() as conn:
        assert [m.id for m in await repo.list_servers(conn, TEAM_A)] == ["mcp-a"]
        assert await repo.get_server(conn, TEAM_A, "mcp-b") is None
        assert await repo.get_server_named(conn, TEAM_A, "tracker-mcp-b") is None
        assert await repo.list_links(conn, TEAM_A, "mcp-b") == []
        assert await repo.list_servers_of_agent(conn, TEAM_A, "agent-b") == []
        await repo.update_server(conn, TEAM_A, "mcp-b", name="taken", enabled=False)
        assert not await repo.update_server_if(conn, TEAM_A, "mcp-b", {}, oauth=b"taken")
        await repo.remove_link(conn, TEAM_A, "mcp-b", "agent-b")
        await repo.remove_links_of_agent(conn, TEAM_A, "agent-b")
        await repo.remove_server(conn, TEAM_A, "mcp-b")
        await repo.add_server(conn, mcp_server(TEAM_A, "mcp-a2"))
        await repo.set_link(conn, McpAgentLink(TEAM_A, "mcp-a2", "agent-a", ()))
        mine = await repo.list_servers_of_agent(conn, TEAM_A, "agent-a")
        assert [(server.id, link.unasked_tools) for server, link in mine] == [
            ("mcp-a", ("echo",)),
            ("mcp-a2", ()),
        ]
    assert calls.names == COVERED[McpServerRepository]


def skill(team: str, skill_id: str) -> Skill:
    return Skill(
        skill_id, team, skill_id, "A skill.", "saved", 1, 1.0, MEMBER, 1.0, MEMBER, None, None
    )


def skill_version(team: str, skill_id: str, version: int = 1) -> SkillVersion:
    return SkillVersion(skill_id, version, team, "A skill.", "created", None, 1, 3, 1.0, MEMBER)


@pytest.mark.usefixtures("untouched")
async def test_skills(db: Database, calls: Calls) -> None:
    repo = calls.watch(SkillRepository())
    async with db.write() as conn:
        assert [s.id for s in await repo.list_skills(conn, TEAM_A)] == ["skill-a"]
        assert await repo.get_skill_by_name(conn, TEAM_A, "skill-b") is None
        assert await repo.list_versions(conn, TEAM_A, "skill-b") == []
        assert await repo.get_files(conn, TEAM_A, "skill-b", 1) is None
        assert await repo.get_file(conn, TEAM_A, "skill-b", 1, "SKILL.md") is None
        assert await repo.list_enabled(conn, TEAM_A, "agent-b") == []
        assert await repo.list_agents_of_skill(conn, TEAM_A, "skill-b") == []
        await repo.update_skill(conn, TEAM_A, "skill-b", name="taken", version=9)
        assert await repo.remove_agent_skill(conn, TEAM_A, "agent-b", "skill-b") is False
        await repo.remove_agent_skills(conn, TEAM_A, "agent-b")
        await repo.remove_skill(conn, TEAM_A, "skill-b")
        await repo.add_skill(conn, skill(TEAM_A, "skill-a2"), "---", [])
        await repo.add_version(conn, skill_version(TEAM_A, "skill-a2"), {"SKILL.md": b"+"})
        assert await repo.add_agent_skill(conn, TEAM_A, "agent-a", "skill-a2", 2.0, None)
        assert [s.name for s in await repo.list_enabled(conn, TEAM_A, "agent-a")] == [
            "skill-a",
            "skill-a2",
        ]
    assert await repo.get_enabled_skill(db, TEAM_A, "agent-b", "skill-b") is None
    assert await repo.get_enabled_skill(db, TEAM_A, "agent-a", "skill-b") is None
    found = await repo.get_enabled_skill(db, TEAM_A, "agent-a", "skill-a")
    assert found is not None
    assert found.skill_id == "skill-a"
    assert calls.names == COVERED[SkillRepository]


@pytest.mark.usefixtures("untouched")
async def test_usage(db: Database, calls: Calls) -> None:
    repo = calls.watch(UsageRepository())
    day = "2026-01-01"
    async with db.write() as conn:
        totals = await repo.list_totals(conn, TEAM_A, day, day, ["agent"])
        assert [(t.key, t.requests) for t in totals] == [({"agent": "agent-a"}, 1)]
        assert await repo.get_spent(conn, TEAM_A, day, day, None, "") == (110, 2_000)
        assert await repo.get_spent(conn, TEAM_A, day, day, "agent_id", "agent-b") == (0, 0)
        assert await repo.list_request_times(conn, TEAM_A) == [("req-a", 1.0)]
        # Team B's request under team A's name: its day stays, and B's rollups are B's.
        await repo.update_days(conn, TEAM_A, [("req-b", "2026-02-02"), ("req-a", day)])
        await repo.add_requests(conn, [model_request(TEAM_A, "req-a2", "agent-a")])
        await repo.add_rollups(conn, [model_request(TEAM_A, "req-a3", "agent-a").rollup()])
        assert await repo.get_spent(conn, TEAM_A, day, day, "agent_id", "agent-a") == (330, 6_000)
        settings = await repo.get_settings(conn, TEAM_A)
        assert settings is not None
        await repo.update_settings(conn, replace(settings, currency="EUR", rate="0.9"))
        assert [p.id for p in await repo.list_prices(conn, TEAM_A)] == ["price-a"]
        assert not await repo.remove_price(conn, TEAM_A, "price-b")
        await repo.add_price(conn, replace(price(TEAM_A, "price-a2"), valid_from=5.0))
        assert [b.id for b in await repo.list_budgets(conn, TEAM_A)] == ["budget-a"]
        assert await repo.get_budget(conn, TEAM_A, "budget-b") is None
        await repo.update_budget(conn, replace(budget(TEAM_A, "budget-b"), amount=1))
        assert not await repo.update_warned(conn, TEAM_A, "budget-b", "2026-01")
        assert not await repo.remove_budget(conn, TEAM_A, "budget-b")
        await repo.add_budget(conn, budget(TEAM_A, "budget-a2"))
        assert await repo.update_warned(conn, TEAM_A, "budget-a2", "2026-01")
    assert calls.names == COVERED[UsageRepository]


@pytest.mark.usefixtures("untouched")
async def test_team_webhooks(db: Database, calls: Calls) -> None:
    repo = calls.watch(TeamWebhookRepository())
    async with db.write() as conn:
        assert [w.id for w in await repo.list_webhooks(conn, TEAM_A)] == ["hook-a"]
        assert await repo.get_webhook(conn, TEAM_A, "hook-b") is None
        await repo.update_webhook(conn, TEAM_A, "hook-b", name="Taken", enabled=False)
        assert await repo.get_delivery(conn, TEAM_A, "dlv-b") is None
        assert await repo.list_deliveries(conn, TEAM_A, "hook-b", 10) == []
        # Team B's delivery under team A's name, as it was read.
        theirs = delivery(TEAM_A, "dlv-b", "hook-b")
        assert not await repo.claim_delivery(conn, theirs, 100.0)
        await repo.update_delivery(conn, TEAM_A, "dlv-b", status="failed")
        await repo.remove_webhook(conn, TEAM_A, "hook-b")
        await repo.add_webhook(conn, webhook(TEAM_A, "hook-a2"))
        await repo.add_delivery(conn, delivery(TEAM_A, "dlv-a2", "hook-a2"))
        assert await repo.claim_delivery(conn, delivery(TEAM_A, "dlv-a2", "hook-a2"), 100.0)
        assert [d.id for d in await repo.list_deliveries(conn, TEAM_A, "hook-a2", 10)] == ["dlv-a2"]
    assert calls.names == COVERED[TeamWebhookRepository]


@pytest.mark.usefixtures("untouched")
async def test_routines(db: Database, calls: Calls) -> None:
    repo = calls.watch(RoutineRepository())
    async with db.write() as conn:
        assert await repo.get_routine(conn, TEAM_A, "routine-b") is None
        assert await repo.list_routines(conn, TEAM_A, "agent-b") == []
        assert await repo.get_run(conn, TEAM_A, "run-b") is None
        assert await repo.get_run_by_delivery(conn, TEAM_A, "delivery-run-b") is None
        assert await repo.list_runs(conn, TEAM_A, "routine-b", 10) == []
        assert await repo.list_unfinished_runs(conn, TEAM_A, "routine-b") == []
        assert await repo.list_unfinished_runs_of(conn, [(TEAM_A, "routine-b")]) == {}
        theirs = routine(TEAM_A, "routine-b", "agent-b")
        await repo.update_routine(conn, replace(theirs, name="Taken", enabled=False))
        await repo.update_thread_id(conn, TEAM_A, "routine-b", "thread-a")
        await repo.update_creator_left(conn, TEAM_A, "routine-b", 5.0)
        await repo.update_fire_times(conn, [(TEAM_A, "routine-b", 5.0, 9.0)])
        await repo.update_run(conn, TEAM_A, "run-b", status="failed", ended_at=2.0)
        assert not await repo.take_queued_run(conn, TEAM_A, "run-b", 2.0)
        assert not await repo.remove_routine(conn, TEAM_A, "routine-b")
        await repo.remove_routines_of_agent(conn, TEAM_A, "agent-b")
        await repo.add_routine(conn, routine(TEAM_A, "routine-a2", "agent-a"))
        await repo.add_run(conn, run(TEAM_A, "run-a2", "routine-b", "agent-b"))
        await repo.add_runs(conn, [run(TEAM_A, "run-a3", "routine-a2", "agent-a")])
        assert [r.id for r in await repo.list_routines(conn, TEAM_A, "agent-a")] == [
            "routine-a",
            "routine-a2",
        ]
        assert [r.id for r in await repo.list_team_routines(conn, TEAM_A)] == [
            "routine-a",
            "routine-a2",
        ]
        assert [r.id for r in await repo.list_unfinished_runs(conn, TEAM_A, "routine-b")] == [
            "run-a2"
        ]
    assert calls.names == COVERED[RoutineRepository]


@pytest.mark.usefixtures("untouched")
async def test_routine_hooks(db: Database, calls: Calls) -> None:
    repo = calls.watch(RoutineHookRepository())
    async with db.write() as conn:
        assert await repo.get_hook(conn, TEAM_A, "rhook-b") is None
        assert await repo.list_hooks(conn, TEAM_A, "routine-b") == []
        assert [h.id for h in await repo.list_hooks(conn, TEAM_A, None)] == ["rhook-a"]
        assert not await repo.get_taken(conn, TEAM_A, "taken-b")
        theirs = routine_hook(TEAM_A, "rhook-b", "routine-b")
        await repo.update_hook(conn, replace(theirs, secret=b"other", enabled=False))
        await repo.remove_hook(conn, TEAM_A, "rhook-b")
        await repo.add_hook(conn, routine_hook(TEAM_A, "rhook-a2", "routine-b"))
        await repo.add_taken(conn, TEAM_A, "taken-a2", "rhook-a2", "routine-b", 2.0, 2.0)
        assert await repo.get_taken(conn, TEAM_A, "taken-a2")
    assert calls.names == COVERED[RoutineHookRepository]


@pytest.mark.usefixtures("untouched")
async def test_notifications(db: Database, calls: Calls) -> None:
    repo = calls.watch(NotificationRepository())
    async with db.write() as conn:
        # The member is in both teams: as team A they see only team A's.
        listed = await repo.list_notifications(conn, TEAM_A, MEMBER, unread_only=True, limit=10)
        assert [n.id for n in listed] == ["note-a"]
        assert await repo.get_notification(conn, TEAM_A, MEMBER, "note-b") is None
        assert await repo.count_unread(conn, TEAM_A, MEMBER) == 1
        assert await repo.update_read(conn, TEAM_A, MEMBER, 2.0, "note-b") == 0
        assert [n.id for n in await repo.list_digest_pending(conn, TEAM_A, MEMBER)] == ["note-a"]
        await repo.update_digest_sent(conn, TEAM_A, MEMBER, ["note-a", "note-b"])
        assert await repo.list_digest_pending(conn, TEAM_A, MEMBER) == []
        assert await repo.update_read(conn, TEAM_A, MEMBER, 2.0) == 1
        await repo.add_notifications(conn, [notification(TEAM_A, "note-a2", "agent-b")])
        assert await repo.count_unread(conn, TEAM_A, MEMBER) == 1
        # The member leaves team A: their notices of team B stay.
        await repo.remove_member(conn, TEAM_A, MEMBER)
        assert await repo.count_unread(conn, TEAM_A, MEMBER) == 0
    assert calls.names == COVERED[NotificationRepository]


@pytest.mark.usefixtures("untouched")
async def test_preferences(db: Database, calls: Calls) -> None:
    repo = calls.watch(PreferencesRepository())
    async with db.write() as conn:
        mine = await repo.get_preferences(conn, TEAM_A, MEMBER)
        assert mine == preferences(TEAM_A)
        assert await repo.list_preferences(conn, TEAM_A, [MEMBER]) == [mine]
        await repo.update_digest_at(conn, TEAM_A, MEMBER, 9.0)
        await repo.update_preferences(conn, replace(mine, email=None, approval="off"))
        assert await repo.get_preferences(conn, TEAM_A, MEMBER) == replace(
            mine, email=None, approval="off"
        )
        # The member leaves team A: team B's choices and notices of theirs stay.
        await repo.remove_member(conn, TEAM_A, MEMBER)
        assert await repo.get_preferences(conn, TEAM_A, MEMBER) is None
    assert calls.names == COVERED[PreferencesRepository]


@pytest.mark.usefixtures("untouched")
async def test_smtp(db: Database, calls: Calls) -> None:
    repo = calls.watch(SmtpRepository())
    async with db.write() as conn:
        assert await repo.get_smtp(conn, TEAM_A) == smtp(TEAM_A)
        await repo.update_smtp(conn, replace(smtp(TEAM_A), host="elsewhere.test", password=None))
        await repo.remove_smtp(conn, TEAM_A)
        assert await repo.get_smtp(conn, TEAM_A) is None
    assert calls.names == COVERED[SmtpRepository]


@pytest.mark.usefixtures("untouched")
async def test_attention(db: Database, calls: Calls) -> None:
    repo = calls.watch(AttentionRepository())
    async with db.write() as conn:
        assert await repo.get_request(conn, TEAM_A, "ask-b") is None
        await repo.update_ended(
            conn,
            TEAM_A,
            "ask-b",
            status="denied",
            reason="no",
            answered_by=MEMBER,
            resolved_at=2.0,
        )
        await repo.add_request(conn, attention(TEAM_A, "ask-a2", "thread-b", "agent-b"))
        asked = await repo.get_request(conn, TEAM_A, "ask-a2")
        assert asked is not None
        assert asked.team_id == TEAM_A
    assert calls.names == COVERED[AttentionRepository]


@pytest.mark.usefixtures("untouched")
async def test_queued_messages(db: Database, calls: Calls) -> None:
    repo = calls.watch(QueuedMessageRepository())
    async with db.write() as conn:
        assert await repo.list_messages(conn, TEAM_A, "thread-b") == []
        assert await repo.count_messages(conn, TEAM_A, "thread-b") == 0
        assert await repo.get_message(conn, TEAM_A, "queued-b") is None
        changed = await repo.update_message(
            conn, TEAM_A, "queued-b", updated_at=2.0, text="Taken", steer=True
        )
        assert not changed
        assert not await repo.remove_message(conn, TEAM_A, "queued-b")
        assert await repo.take_message(conn, TEAM_A, "queued-b", steered_only=False) is None
        await repo.add_message(conn, queued(TEAM_A, "queued-a2", "thread-a"))
        assert await repo.count_messages(conn, TEAM_A, "thread-a") == 2
        # The member is in both teams: only team A's messages of theirs go.
        removed = await repo.remove_sender_messages(conn, TEAM_A, MEMBER)
        assert {q.id for q in removed} == {"queued-a", "queued-a2"}
    assert calls.names == COVERED[QueuedMessageRepository]


def suspended(team: str, turn_id: str, thread_id: str, agent_id: str) -> SuspendedTurn:
    return SuspendedTurn(
        turn_id, team, thread_id, agent_id, "r" * 32, f"{turn_id}.1", MEMBER, None, None, None, 1.0
    )


@pytest.mark.usefixtures("untouched")
async def test_suspended_turns(db: Database, calls: Calls) -> None:
    repo = calls.watch(SuspendedTurnRepository())
    async with db.write() as conn:
        await repo.add_turn(conn, suspended(TEAM_A, "turn-a2", "thread-b", "agent-b"))
    assert calls.names == COVERED[SuspendedTurnRepository]


@pytest.mark.usefixtures("untouched")
async def test_read_cursors(db: Database, calls: Calls) -> None:
    repo = calls.watch(ReadCursorRepository())
    async with db.write() as conn:
        # Each team's turn ended after the member's cursor: one unread in each.
        unread = await repo.count_unread(conn, TEAM_A, MEMBER, ["thread-a", "thread-b"])
        assert unread == {"thread-a": 1}
        # Another member's cursor on team B's thread id is a row of team A's.
        await repo.update_cursor(conn, TEAM_A, "thread-b", "o" * 32, 9.0)
        assert await repo.count_unread(conn, TEAM_A, "o" * 32, ["thread-b"]) == {}
        await repo.update_cursor(conn, TEAM_A, "thread-a", MEMBER, 9.0)
        assert await repo.count_unread(conn, TEAM_A, MEMBER, ["thread-a"]) == {}
    assert calls.names == COVERED[ReadCursorRepository]
