"""Every route table the host serves, in one place."""

from __future__ import annotations

from server.host.routes import (
    agents,
    attention,
    browser_control,
    browser_profiles,
    browsing_memory,
    providers,
    system,
    teaching,
    threads,
    web_search,
    workspace,
)

ROUTE_TABLES = (
    system.routes,
    browser_profiles.routes,
    browser_control.routes,
    agents.routes,
    providers.routes,
    threads.routes,
    attention.routes,
    web_search.routes,
    browsing_memory.routes,
    teaching.routes,
    workspace.routes,
)
