"""Every route table the host serves, in one place."""

from __future__ import annotations

from server.host.routes import (
    agent_memories,
    agents,
    attention,
    browser_control,
    browser_profiles,
    browser_proxies,
    browsing_memory,
    providers,
    routine_hooks,
    routines,
    secret_handoff,
    secret_vault,
    system,
    teaching,
    threads,
    vault,
    web_search,
    workspace,
)

ROUTE_TABLES = (
    system.routes,
    browser_profiles.routes,
    browser_proxies.routes,
    browser_control.routes,
    agents.routes,
    providers.routes,
    threads.routes,
    attention.routes,
    web_search.routes,
    browsing_memory.routes,
    agent_memories.routes,
    teaching.routes,
    workspace.routes,
    vault.routes,
    secret_handoff.routes,
    secret_vault.routes,
    routine_hooks.routes,
    routines.routes,
)
