"""The schema, as SQLAlchemy Core tables. Alembic's history in ``server/db/migrations/`` creates it.

Times are seconds since the epoch (float) so SQLite and PostgreSQL agree exactly.
Every table that belongs to a team carries ``team_id``.
"""

from __future__ import annotations

import sqlalchemy as sa

from server.common.crypto.columns import EncryptedColumn

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

ID = sa.String(32)
TIME = sa.Float(precision=53)

accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("email", sa.String(254), nullable=False, unique=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("password_hash", sa.String(255), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

avatars = sa.Table(
    "avatars",
    metadata,
    sa.Column("account_id", ID, sa.ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("content_type", sa.String(32), nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("account_id", ID, sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("client", sa.String(16), nullable=False),
    sa.Column("user_agent", sa.String(200), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("last_seen_at", TIME, nullable=False),
    sa.Column("expires_at", TIME, nullable=False),
    sa.Index(None, "account_id"),
)

teams = sa.Table(
    "teams",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("name", sa.String(60), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

memberships = sa.Table(
    "memberships",
    metadata,
    sa.Column("team_id", ID, sa.ForeignKey("teams.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("account_id", ID, sa.ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("joined_at", TIME, nullable=False),
    sa.Index(None, "account_id"),
)

invitations = sa.Table(
    "invitations",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
    sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("created_by", ID, sa.ForeignKey("accounts.id", ondelete="SET NULL"), nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("expires_at", TIME, nullable=False),
    sa.Column("max_uses", sa.Integer, nullable=False),
    sa.Column("uses", sa.Integer, nullable=False),
    sa.Column("revoked_at", TIME, nullable=True),
    sa.Index(None, "team_id"),
)

# Who joined with which invitation, and when.
invitation_uses = sa.Table(
    "invitation_uses",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
    sa.Column(
        "invitation_id", ID, sa.ForeignKey("invitations.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("account_id", ID, sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False),
    sa.Column("used_at", TIME, nullable=False),
    sa.Index(None, "team_id"),
)

setup_codes = sa.Table(
    "setup_codes",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", TIME, nullable=False),
)

# A host the hub knows by its identity key. ``team_id`` is the team that enrolled it;
# NULL only for the built-in host of ``crewhost serve``, which serves every team.
hosts = sa.Table(
    "hosts",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=True),
    sa.Column("name", sa.String(60), nullable=False),
    sa.Column("public_key", sa.String(64), nullable=False, unique=True),
    sa.Column("builtin", sa.Boolean, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    # Set while some hub instance holds the host's link; cleared when the link ends.
    sa.Column("linked_at", TIME, nullable=True),
    # The hub instance holding that link: only it renews the link or marks it ended, so a
    # hub whose link to the host died after the host relinked elsewhere changes nothing.
    sa.Column("linked_by", ID, nullable=True),
    sa.Index(None, "team_id"),
)

host_enrolments = sa.Table(
    "host_enrolments",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, sa.ForeignKey("teams.id", ondelete="CASCADE"), nullable=False),
    sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("name", sa.String(60), nullable=False),
    sa.Column("created_by", ID, sa.ForeignKey("accounts.id", ondelete="SET NULL"), nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("expires_at", TIME, nullable=False),
    sa.Index(None, "team_id"),
)

# The hub's ticket-signing key, shared by every hub instance on one database.
hub_keys = sa.Table(
    "hub_keys",
    metadata,
    sa.Column("id", sa.String(16), primary_key=True),
    sa.Column("private_key", sa.String(64), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

# --- host-side tables ---------------------------------------------------------------
# A remote host keeps these in a database of its own, where the hub's tables are
# empty, so they carry team_id without a foreign key to teams.

agents = sa.Table(
    "agents",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    # "Only this agent": a partition of its own, keyed by the SHA-256 of the agent id.
    sa.Column("own_browser_session", sa.Boolean, nullable=False),
    sa.Column("browser_profile_id", sa.String(40), nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("instructions", sa.Text, nullable=False, server_default=""),
    # "anthropic", "openai", "openrouter" or a custom provider's id.
    sa.Column("provider", sa.String(40), nullable=False, server_default="anthropic"),
    # None: the provider's default model.
    sa.Column("model", sa.String(200), nullable=True),
    # JSON: gated tool family -> "ask" | "auto-approve"; a family not named asks.
    sa.Column("permissions", sa.Text, nullable=False, server_default="{}"),
    # None: the host's default cap on tool calls per turn.
    sa.Column("max_tool_calls", sa.Integer, nullable=True),
    sa.Column("updated_at", TIME, nullable=True),
    # JSON list of the team's agent ids this agent may ask (``ask_agent``); None: none.
    sa.Column("may_ask", sa.JSON, nullable=True),
    sa.Index(None, "team_id"),
)

# A conversation with an agent, private to the member who started it unless shared.
threads = sa.Table(
    "threads",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("shared", sa.Boolean, nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    # A thread another agent's ``ask_agent`` started: the asking thread and its agent.
    sa.Column("parent_thread_id", ID, nullable=True),
    sa.Column("parent_agent_id", ID, nullable=True),
    sa.Index(None, "team_id", "agent_id"),
    sa.Index(None, "team_id", "parent_thread_id"),
)

# A thread's transcript, in order; ``body`` is one provider-neutral message as JSON.
thread_messages = sa.Table(
    "thread_messages",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.UniqueConstraint("thread_id", "seq"),
    sa.Index(None, "team_id", "thread_id"),
)

# One model loop run: from a member's message to done, denied, capped, incomplete, stopped or error.
turns = sa.Table(
    "turns",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    # An error's stable code (``providerKeyMissing``, …), for what a person can do about it.
    sa.Column("code", sa.String(64), nullable=True),
    sa.Column("tool_calls", sa.Integer, nullable=False),
    sa.Column("input_tokens", sa.Integer, nullable=False),
    sa.Column("output_tokens", sa.Integer, nullable=False),
    sa.Column("started_at", TIME, nullable=False),
    sa.Column("ended_at", TIME, nullable=True),
    sa.Index(None, "team_id", "thread_id"),
)

browser_profiles = sa.Table(
    "browser_profiles",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("name", sa.String(60), nullable=False),
    sa.Column("hue", sa.Integer, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.UniqueConstraint("team_id", "name"),
)

# What an agent chose to remember. ``site`` (a lowercase host without ``www.``) ties a
# memory to a site, so a snapshot of that site or a subdomain shows it.
agent_memories = sa.Table(
    "agent_memories",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("site", sa.String(253), nullable=True),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    # The one member whose memory it is (made from their private thread); NULL: the team's.
    sa.Column("member_id", ID, nullable=True),
    # Essential: sent in every turn, before the others.
    sa.Column("pinned", sa.Boolean, nullable=False, server_default=sa.false()),
    # How many turns carried it and snapshots showed it; when it was last made, changed or used.
    sa.Column("uses", sa.Integer, nullable=False, server_default="0"),
    sa.Column("active_at", TIME, nullable=True),
    sa.Column("updated_at", TIME, nullable=True),
    sa.Column("updated_by", ID, nullable=True),
    # Where it came from: remember (in a thread's turn), review (of threads), or a person.
    sa.Column("source", sa.String(16), nullable=False, server_default="remember"),
    # JSON list of the thread ids it came from; the turn when ``remember`` made it.
    sa.Column("source_threads", sa.Text, nullable=False, server_default="[]"),
    sa.Column("source_turn_id", ID, nullable=True),
    sa.Index(None, "team_id", "agent_id", "site"),
    # A turn's block (no site; essential, last active, most used first) and the Memories
    # list (essential, newest first) read in these orders.
    sa.Index(None, "team_id", "agent_id", "site", "pinned", "active_at", "uses"),
    sa.Index(None, "team_id", "agent_id", "pinned", "created_at"),
)

# A team's model providers: a row for each custom one, and for a built-in one
# (``anthropic``, ``openai``, ``openrouter``) once its key or settings change.
providers = sa.Table(
    "providers",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    # A built-in provider's name, or ``custom-`` and 32 hex digits.
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.String(60), nullable=False),
    # None: the built-in provider's own address.
    sa.Column("base_url", sa.String(2048), nullable=True),
    # None: the built-in provider's default model.
    sa.Column("default_model", sa.String(200), nullable=True),
    sa.Column("models", sa.JSON, nullable=False),
    # Secret-box output (see ENCRYPTED_COLUMNS), never the key itself.
    sa.Column("api_key", sa.LargeBinary, nullable=True),
    sa.Column("last_error", sa.String(500), nullable=True),
    # When the provider last answered a request with its current key and address (a test
    # or a turn); None until then, and again after a failure or a change of either.
    sa.Column("verified_at", TIME, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.UniqueConstraint("team_id", "name"),
)

# How a team's agents search the web: one row per team that chose other than the default.
web_search_settings = sa.Table(
    "web_search_settings",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    # 'duckduckgo', 'searxng', 'brave' or 'google'.
    sa.Column("engine", sa.String(16), nullable=False),
    # A SearXNG instance's address.
    sa.Column("base_url", sa.String(2048), nullable=True),
    # Google Programmable Search's engine id (cx).
    sa.Column("engine_id", sa.String(200), nullable=True),
    # Secret-box output (see ENCRYPTED_COLUMNS), never the key itself.
    sa.Column("api_key", sa.LargeBinary, nullable=True),
    sa.Column("updated_at", TIME, nullable=False),
)

# A team's saved proxies: an address (``kind = 'address'``) or a member's computer
# (``kind = 'computer'``, one row per member, reached over that member's egress channel).
browser_proxies = sa.Table(
    "browser_proxies",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    # The address's parts; a computer has none of them.
    sa.Column("scheme", sa.String(8), nullable=True),
    sa.Column("host", sa.String(253), nullable=True),
    sa.Column("port", sa.Integer, nullable=True),
    sa.Column("username", sa.String(255), nullable=True),
    # Secret-box output (see ENCRYPTED_COLUMNS), never the password itself.
    sa.Column("password", sa.LargeBinary, nullable=True),
    # The account whose computer this is, and the label its owner gave it.
    sa.Column("member_id", ID, nullable=True),
    sa.Column("label", sa.String(60), nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.UniqueConstraint("team_id", "member_id"),
    sa.Index(None, "team_id"),
)

# Which proxy a named profile uses; a profile without a row is Automatic. Deleting the
# profile or the proxy deletes the row, so the profile goes back to Automatic.
browser_profile_proxies = sa.Table(
    "browser_profile_proxies",
    metadata,
    sa.Column(
        "profile_id",
        sa.String(40),
        sa.ForeignKey("browser_profiles.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("team_id", ID, nullable=False),
    sa.Column(
        "proxy_id",
        sa.String(40),
        sa.ForeignKey("browser_proxies.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Index(None, "team_id", "proxy_id"),
)

# A team's vault: logins, cards and contact details. The columns of the other kinds stay
# NULL. Secret fields hold secret-box output (see ENCRYPTED_COLUMNS), never the value.
vault_items = sa.Table(
    "vault_items",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    # "login", "card" or "contact".
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    # Logins: the origins (scheme://host[:port]) the login may be entered on, as JSON.
    sa.Column("sites", sa.JSON, nullable=False),
    sa.Column("username", sa.String(254), nullable=True),
    sa.Column("notes", sa.Text, nullable=True),
    sa.Column("cardholder", sa.String(100), nullable=True),
    sa.Column("expiry", sa.String(7), nullable=True),
    sa.Column("billing_address", sa.String(500), nullable=True),
    # What a card shows of itself: the last four digits and the brand they imply.
    sa.Column("card_last4", sa.String(4), nullable=True),
    sa.Column("card_brand", sa.String(20), nullable=True),
    sa.Column("email", sa.String(254), nullable=True),
    sa.Column("phone", sa.String(40), nullable=True),
    sa.Column("postal_address", sa.String(500), nullable=True),
    sa.Column("password", sa.LargeBinary, nullable=True),
    sa.Column("totp_secret", sa.LargeBinary, nullable=True),
    sa.Column("card_number", sa.LargeBinary, nullable=True),
    sa.Column("security_code", sa.LargeBinary, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index(None, "team_id", "name"),
)

# Whether a team records what people do in its agents' tabs, for the agents to learn from.
browsing_memory_settings = sa.Table(
    "browsing_memory_settings",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)

# Steps a person took while holding an agent's tab, until the agent's next memory review:
# one line each (a page's host, path and title, or a control's role and name), no values.
# ``member_id``: the member whose private thread owned the tab when the step was taken (the
# step is reviewed into that member's memories); None for a shared thread's tab or no thread's.
browsing_steps = sa.Table(
    "browsing_steps",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("line", sa.String(1000), nullable=False),
    sa.Column("member_id", ID, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Index(None, "team_id", "agent_id", "created_at"),
)

# --- webhook triggers ----------------------------------------------------------------
# The hub's half: each hook a host registered (its signing secrets, which the hub needs
# to check a sender's signature while the host is away), and each delivery it accepted,
# kept until the owning host acknowledges it. ``webhook_id`` is unique per hook: a replay
# within the retention time is refused by the database itself.
hub_hooks = sa.Table(
    "hub_hooks",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("host_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=False),
    sa.Column("secret", sa.String(128), nullable=False),
    sa.Column("previous_secret", sa.String(128), nullable=True),
    sa.Column("previous_until", TIME, nullable=True),
    sa.Column("filters", sa.String(8192), nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index(None, "host_id"),
)

hub_hook_deliveries = sa.Table(
    "hub_hook_deliveries",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("hook_id", ID, nullable=False),
    sa.Column("host_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=False),
    sa.Column("webhook_id", sa.String(256), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    # pending (the host has not acknowledged it), delivered, or skipped (its filters said no)
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("received_at", TIME, nullable=False),
    sa.Column("delivered_at", TIME, nullable=True),
    sa.UniqueConstraint("hook_id", "webhook_id"),
    sa.Index(None, "host_id", "status", "received_at"),
    sa.Index(None, "received_at"),
)

# The host's half: the hook as its routine's owners manage it, its secrets sealed, and
# each delivery id the host has taken, so a delivery sent twice starts one run.
routine_hooks = sa.Table(
    "routine_hooks",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=False),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("secret", sa.LargeBinary, nullable=False),
    sa.Column("previous_secret", sa.LargeBinary, nullable=True),
    sa.Column("previous_until", TIME, nullable=True),
    sa.Column("filters", sa.JSON, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("rotated_at", TIME, nullable=True),
    sa.Index(None, "team_id", "routine_id"),
)

routine_hook_deliveries = sa.Table(
    "routine_hook_deliveries",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("hook_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=False),
    sa.Column("received_at", TIME, nullable=False),
    sa.Column("taken_at", TIME, nullable=False),
    sa.Index(None, "team_id", "hook_id", "taken_at"),
)

# MCP servers a team's agents may use. Environment values (stdio) and headers (http) are
# one JSON object sealed by the secret box (``secrets``); only their names are plain.
mcp_servers = sa.Table(
    "mcp_servers",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("name", sa.String(40), nullable=False),
    sa.Column("transport", sa.String(8), nullable=False),
    sa.Column("command", sa.String(1000), nullable=True),
    sa.Column("args", sa.JSON, nullable=False),
    sa.Column("url", sa.String(2048), nullable=True),
    sa.Column("secret_names", sa.JSON, nullable=False),
    sa.Column("secrets", sa.LargeBinary, nullable=True),
    sa.Column("call_timeout", sa.Float, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    # An OAuth sign-in's client registration and tokens (secret-box output, JSON).
    sa.Column("oauth", sa.LargeBinary, nullable=True),
    # An OAuth client an admin entered (for a server that registers none): its id, and
    # its secret (secret-box output).
    sa.Column("oauth_client_id", sa.String(255), nullable=True),
    sa.Column("oauth_client_secret", sa.LargeBinary, nullable=True),
    sa.UniqueConstraint("team_id", "name"),
)

# Which agents have which MCP server, and the tools each may call without asking.
mcp_server_agents = sa.Table(
    "mcp_server_agents",
    metadata,
    sa.Column("team_id", ID, nullable=False),
    sa.Column("server_id", ID, primary_key=True),
    sa.Column("agent_id", ID, primary_key=True),
    sa.Column("unasked_tools", sa.JSON, nullable=False),
    sa.Index(None, "team_id", "agent_id"),
)

# Team webhooks: endpoints that owners and admins add, told of runs and waiting approvals.
# ``url_origin`` is shown; the rest of the address (a chat service's path token, the
# query) is ``url_secret``, sealed by the secret box, as is the signing secret.
team_webhooks = sa.Table(
    "team_webhooks",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("url_origin", sa.String(300), nullable=False),
    sa.Column("url_secret", sa.LargeBinary, nullable=True),
    sa.Column("body_format", sa.String(16), nullable=False),
    sa.Column("kinds", sa.JSON, nullable=False),
    sa.Column("signing_secret", sa.LargeBinary, nullable=False),
    # After a rotation, the secret before it also signs until ``previous_secret_until``.
    sa.Column("previous_signing_secret", sa.LargeBinary, nullable=True),
    sa.Column("previous_secret_until", TIME, nullable=True),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index(None, "team_id", "created_at"),
)

# Each event sent (or to send) to a team webhook: durable, so retries survive a restart.
# ``next_attempt_at`` is set while the delivery is pending; a sender claims a delivery by
# moving it forward (a lease), so a crash mid-attempt is retried once the lease ends.
team_webhook_deliveries = sa.Table(
    "team_webhook_deliveries",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("webhook_id", ID, nullable=False),
    sa.Column("kind", sa.String(40), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("max_attempts", sa.Integer, nullable=False),
    sa.Column("next_attempt_at", TIME, nullable=True),
    sa.Column("last_status", sa.Integer, nullable=True),
    sa.Column("last_error", sa.String(200), nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index(None, "team_id", "webhook_id", "created_at"),
    sa.Index(None, "status", "next_attempt_at"),
)

# A routine: the message that starts each run of an agent, and when (``schedule`` is
# JSON, see host/agents/routine_schedules). ``next_fire_at`` None: nothing left to fire.
routines = sa.Table(
    "routines",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("schedule", sa.Text, nullable=False),
    # "new": a thread per run; "continue": one thread, ``thread_id`` once made.
    sa.Column("thread_policy", sa.String(16), nullable=False),
    sa.Column("thread_id", ID, nullable=True),
    # "creator", "members" (``audience_members`` JSON) or "team".
    sa.Column("audience", sa.String(16), nullable=False),
    sa.Column("audience_members", sa.Text, nullable=False, server_default="[]"),
    # JSON list of accounts who answer its runs' approvals; empty: its creator.
    sa.Column("approvers", sa.Text, nullable=False, server_default="[]"),
    sa.Column("approval_seconds", sa.Integer, nullable=False, server_default="86400"),
    # "skip" or "queue" (at most one waiting run); missed after downtime: "once" or "skip".
    sa.Column("overlap", sa.String(16), nullable=False),
    sa.Column("missed", sa.String(16), nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("next_fire_at", TIME, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    # When its creator left the team (None: a member still): it never runs again, as them.
    sa.Column("creator_left_at", TIME, nullable=True),
    sa.Index(None, "team_id", "agent_id"),
    sa.Index(None, "enabled", "next_fire_at"),
)

# A routine's runs: "queued", "running", then how it ended (work_signals.RunStatus).
routine_runs = sa.Table(
    "routine_runs",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    # "schedule", "manual" or "webhook".
    sa.Column("trigger", sa.String(16), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    # The schedule's fire time for a scheduled run.
    sa.Column("due_at", TIME, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("started_at", TIME, nullable=True),
    sa.Column("ended_at", TIME, nullable=True),
    sa.Column("started_by", ID, nullable=True),
    sa.Column("thread_id", ID, nullable=True),
    sa.Column("turn_id", ID, nullable=True),
    # A webhook delivery's id (one run per delivery) and its body, quoted as data.
    sa.Column("delivery_id", sa.String(100), nullable=True, unique=True),
    sa.Column("body", sa.Text, nullable=True),
    sa.Index(None, "team_id", "routine_id", "created_at"),
    sa.Index(None, "status"),
)

# What a member is told: an approval or a question waiting for them, a run they see that
# ended. Words and ids only: never a secret, page contents or tool arguments.
notifications = sa.Table(
    "notifications",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("account_id", ID, nullable=False),
    # 'approval', 'question', 'runFinished' or 'runFailed'.
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("body", sa.String(1000), nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=True),
    # The attention request, or the routine and its run, it is about.
    sa.Column("request_id", ID, nullable=True),
    sa.Column("routine_id", ID, nullable=True),
    sa.Column("run_id", ID, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("read_at", TIME, nullable=True),
    # Waiting for the member's next hourly digest by email.
    sa.Column("digest_pending", sa.Boolean, nullable=False),
    sa.Index(None, "team_id", "account_id", "created_at"),
    sa.Index(None, "team_id", "account_id", "digest_pending"),
)

# How a member wants to be told by email, per kind: 'off', 'immediately' or 'digest'.
notification_preferences = sa.Table(
    "notification_preferences",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    sa.Column("account_id", ID, primary_key=True),
    # Where email notices go; None: no email.
    sa.Column("email", sa.String(254), nullable=True),
    sa.Column("approval", sa.String(16), nullable=False),
    sa.Column("question", sa.String(16), nullable=False),
    sa.Column("run_finished", sa.String(16), nullable=False),
    sa.Column("run_failed", sa.String(16), nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    # When the member's last digest went out (or their first digest notice was kept).
    sa.Column("digest_at", TIME, nullable=True),
)

# The team's outgoing mail server, set by an owner.
smtp_settings = sa.Table(
    "smtp_settings",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    sa.Column("host", sa.String(253), nullable=False),
    sa.Column("port", sa.Integer, nullable=False),
    # 'none', 'starttls' or 'tls'.
    sa.Column("tls_mode", sa.String(16), nullable=False),
    sa.Column("username", sa.String(254), nullable=True),
    # Secret-box output (see ENCRYPTED_COLUMNS), never the password itself.
    sa.Column("password", sa.LargeBinary, nullable=True),
    sa.Column("from_address", sa.String(254), nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)


# A request an agent waits on a person for (consent, a question, a secret, a vault item):
# kept while it waits and after, so a restart finds it: a consent whose turn was put aside
# (``suspended_turns``) waits on, any other ends ``interrupted``.
# ``addressed_to`` is a JSON list of accounts (null: whoever sees the thread).
attention_requests = sa.Table(
    "attention_requests",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("tool", sa.String(100), nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("addressed_to", sa.Text, nullable=True),
    sa.Column("whole_team", sa.Boolean, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("expires_at", TIME, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("answered_by", ID, nullable=True),
    sa.Column("resolved_at", TIME, nullable=True),
    sa.Index(None, "team_id", "status"),
    sa.Index(None, "team_id", "thread_id"),
)

# A turn the host put aside as it stopped, waiting for a person's consent to one of its
# calls (``request_id``, for ``call_id``): its next start takes it up where it was. What the
# turn was started with (whose budgets it spends, who answers its requests, how long each
# waits) is kept here, the transcript in ``thread_messages``. ``approvers``: a JSON list
# (null: whoever sees the thread).
suspended_turns = sa.Table(
    "suspended_turns",
    metadata,
    sa.Column("turn_id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("request_id", ID, nullable=False),
    sa.Column("call_id", sa.String(100), nullable=False),
    sa.Column("started_by", ID, nullable=True),
    sa.Column("approvers", sa.Text, nullable=True),
    sa.Column("attention_seconds", TIME, nullable=True),
    sa.Column("routine_id", ID, nullable=True),
    sa.Column("suspended_at", TIME, nullable=False),
    sa.Index(None, "team_id", "thread_id"),
)

# A member's message sent while its thread's turn ran: it waits here until that turn ends
# (or, steered, until the turn's next model request), editable and cancellable until then.
queued_messages = sa.Table(
    "queued_messages",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=False),
    sa.Column("account_id", ID, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("attachments", sa.Text, nullable=False),
    sa.Column("steer", sa.Boolean, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index(None, "team_id", "thread_id", "created_at"),
)

# Where each member last read each thread: the chat list's unread counts.
thread_read_cursors = sa.Table(
    "thread_read_cursors",
    metadata,
    sa.Column("team_id", ID, nullable=False),
    sa.Column("thread_id", ID, primary_key=True),
    sa.Column("account_id", ID, primary_key=True),
    sa.Column("read_at", TIME, nullable=False),
    sa.Index(None, "team_id", "account_id"),
)


# Every column that holds secret-box ciphertexts: the host's start-up check and key
# rotation find them here.
PROVIDER_API_KEY = EncryptedColumn(providers, "id", "team_id", "api_key", "provider-api-key")
WEB_SEARCH_API_KEY = EncryptedColumn(
    web_search_settings, "team_id", "team_id", "api_key", "web-search-api-key"
)
PROXY_PASSWORD = EncryptedColumn(browser_proxies, "id", "team_id", "password", "proxy-password")
VAULT_PASSWORD = EncryptedColumn(vault_items, "id", "team_id", "password", "vault-password")
VAULT_TOTP_SECRET = EncryptedColumn(
    vault_items, "id", "team_id", "totp_secret", "vault-totp-secret"
)
VAULT_CARD_NUMBER = EncryptedColumn(
    vault_items, "id", "team_id", "card_number", "vault-card-number"
)
VAULT_SECURITY_CODE = EncryptedColumn(
    vault_items, "id", "team_id", "security_code", "vault-security-code"
)
HOOK_SECRET = EncryptedColumn(routine_hooks, "id", "team_id", "secret", "hook-secret")
HOOK_PREVIOUS_SECRET = EncryptedColumn(
    routine_hooks, "id", "team_id", "previous_secret", "hook-previous-secret"
)
TEAM_WEBHOOK_URL_SECRET = EncryptedColumn(
    team_webhooks, "id", "team_id", "url_secret", "team-webhook-url-secret"
)
TEAM_WEBHOOK_SIGNING_SECRET = EncryptedColumn(
    team_webhooks, "id", "team_id", "signing_secret", "team-webhook-signing-secret"
)
SMTP_PASSWORD = EncryptedColumn(smtp_settings, "team_id", "team_id", "password", "smtp-password")
TEAM_WEBHOOK_PREVIOUS_SECRET = EncryptedColumn(
    team_webhooks,
    "id",
    "team_id",
    "previous_signing_secret",
    "team-webhook-previous-signing-secret",
)
MCP_SERVER_SECRETS = EncryptedColumn(mcp_servers, "id", "team_id", "secrets", "mcp-server-secrets")
MCP_SERVER_OAUTH = EncryptedColumn(mcp_servers, "id", "team_id", "oauth", "mcp-server-oauth")
MCP_SERVER_CLIENT_SECRET = EncryptedColumn(
    mcp_servers, "id", "team_id", "oauth_client_secret", "mcp-server-client-secret"
)
ENCRYPTED_COLUMNS: tuple[EncryptedColumn, ...] = (
    PROVIDER_API_KEY,
    WEB_SEARCH_API_KEY,
    PROXY_PASSWORD,
    VAULT_PASSWORD,
    VAULT_TOTP_SECRET,
    VAULT_CARD_NUMBER,
    VAULT_SECURITY_CODE,
    HOOK_SECRET,
    HOOK_PREVIOUS_SECRET,
    TEAM_WEBHOOK_URL_SECRET,
    TEAM_WEBHOOK_SIGNING_SECRET,
    SMTP_PASSWORD,
    TEAM_WEBHOOK_PREVIOUS_SECRET,
    MCP_SERVER_SECRETS,
    MCP_SERVER_OAUTH,
    MCP_SERVER_CLIENT_SECRET,
)


# --- personal access tokens --------------------------------------------------------------
# A member's bearer token for the MCP endpoint: one team and one host, a scope and an
# expiry; only the SHA-256 of the secret is kept. Each tool call made with one is in
# ``access_token_uses`` (the audit list the member and the team's admins read).
access_tokens = sa.Table(
    "access_tokens",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("host_id", ID, nullable=False),
    sa.Column("account_id", ID, nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    # browser, or browser+agents
    sa.Column("scope", sa.String(32), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("expires_at", TIME, nullable=False),
    sa.Column("last_used_at", TIME, nullable=True),
    sa.Column("revoked_at", TIME, nullable=True),
    sa.Index(None, "team_id", "account_id"),
)

access_token_uses = sa.Table(
    "access_token_uses",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("token_id", ID, nullable=False),
    sa.Column("account_id", ID, nullable=False),
    sa.Column("at", TIME, nullable=False),
    sa.Column("tool", sa.String(100), nullable=False),
    # ok, error (the tool answered with an error), refused (the token or a person said no)
    sa.Column("outcome", sa.String(16), nullable=False),
    sa.Index(None, "team_id", "token_id", "at"),
)

# One row per model request: who it was for, what it cost (see docs/usage.md).
model_requests = sa.Table(
    "model_requests",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("agent_id", ID, nullable=False),
    sa.Column("thread_id", ID, nullable=True),
    sa.Column("turn_id", ID, nullable=True),
    # The member who started the turn ('' for none), and the routine whose run it was ('').
    sa.Column("account_id", ID, nullable=False),
    sa.Column("routine_id", ID, nullable=False),
    sa.Column("provider_id", sa.String(64), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("input_tokens", sa.BigInteger, nullable=False),
    sa.Column("output_tokens", sa.BigInteger, nullable=False),
    sa.Column("cache_read_tokens", sa.BigInteger, nullable=False),
    sa.Column("cache_write_tokens", sa.BigInteger, nullable=False),
    sa.Column("reasoning_tokens", sa.BigInteger, nullable=False),
    sa.Column("latency_ms", sa.Integer, nullable=False),
    # ok, or failed (the provider answered with an error or the stream broke)
    sa.Column("status", sa.String(16), nullable=False),
    # USD micro-dollars; null: the model has no price
    sa.Column("cost_micros", sa.BigInteger, nullable=True),
    sa.Column("at", TIME, nullable=False),
    # The day in the team's time zone (YYYY-MM-DD): the rollup row it is summed in.
    sa.Column("day", sa.String(10), nullable=False),
    sa.Index(None, "team_id", "at"),
)

# Sums of model_requests per team, day, agent, member, provider, model and routine,
# kept in the transaction that adds each request: reports read these, never the rows.
usage_rollups = sa.Table(
    "usage_rollups",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    sa.Column("day", sa.String(10), primary_key=True),
    sa.Column("agent_id", ID, primary_key=True),
    sa.Column("account_id", ID, primary_key=True),
    sa.Column("provider_id", sa.String(64), primary_key=True),
    sa.Column("model", sa.String(200), primary_key=True),
    sa.Column("routine_id", ID, primary_key=True),
    sa.Column("requests", sa.BigInteger, nullable=False),
    sa.Column("input_tokens", sa.BigInteger, nullable=False),
    sa.Column("output_tokens", sa.BigInteger, nullable=False),
    sa.Column("cache_read_tokens", sa.BigInteger, nullable=False),
    sa.Column("cache_write_tokens", sa.BigInteger, nullable=False),
    sa.Column("reasoning_tokens", sa.BigInteger, nullable=False),
    # The priced requests' cost (USD micro-dollars) and how many had no price.
    sa.Column("cost_micros", sa.BigInteger, nullable=False),
    sa.Column("unpriced_requests", sa.BigInteger, nullable=False),
)

# A team's own prices (USD per million tokens, decimal strings), each from ``valid_from`` on.
usage_prices = sa.Table(
    "usage_prices",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("provider_id", sa.String(64), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("valid_from", TIME, nullable=False),
    sa.Column("input", sa.String(32), nullable=False),
    sa.Column("output", sa.String(32), nullable=False),
    sa.Column("cache_read", sa.String(32), nullable=False),
    sa.Column("cache_write", sa.String(32), nullable=False),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.UniqueConstraint("team_id", "provider_id", "model", "valid_from"),
)

# A team's usage settings: the time zone its days and months are counted in, and the
# currency it shows costs in at a rate it sets (units of it per US dollar).
usage_settings = sa.Table(
    "usage_settings",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    sa.Column("time_zone", sa.String(64), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("rate", sa.String(32), nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)

budgets = sa.Table(
    "budgets",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("name", sa.String(100), nullable=False),
    # team, agent, member or routine; target_id names the agent, member or routine ('')
    sa.Column("scope", sa.String(16), nullable=False),
    sa.Column("target_id", ID, nullable=False),
    # month (calendar month in the team's zone), or custom (first_day..last_day)
    sa.Column("period", sa.String(16), nullable=False),
    sa.Column("first_day", sa.String(10), nullable=True),
    sa.Column("last_day", sa.String(10), nullable=True),
    # cost (USD micro-dollars) or tokens
    sa.Column("unit", sa.String(16), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    # The period whose 80 % notice went out (its first day), so it goes once.
    sa.Column("warned_period", sa.String(10), nullable=True),
    sa.Column("created_by", ID, nullable=False),
    sa.Column("updated_by", ID, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Index(None, "team_id"),
)

# A team's skills (folders in the open Agent Skills format). A draft (an agent proposed it)
# is listed to people only, never to agents, until someone saves it.
skills = sa.Table(
    "skills",
    metadata,
    sa.Column("id", ID, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    # draft or saved
    sa.Column("state", sa.String(8), nullable=False),
    # The newest version, the one agents read.
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    # The member who made it; NULL when an agent proposed it (``source_agent_id``).
    sa.Column("created_by", ID, nullable=True),
    sa.Column("updated_at", TIME, nullable=False),
    sa.Column("updated_by", ID, nullable=True),
    sa.Column("source_agent_id", ID, nullable=True),
    sa.Column("source_thread_id", ID, nullable=True),
    # The newest version's SKILL.md and the paths of its other files (a JSON list), so
    # that load_skill is one small read.
    sa.Column("skill_md", sa.Text, nullable=False),
    sa.Column("paths", sa.Text, nullable=False),
    sa.UniqueConstraint("team_id", "name"),
)

# Every save of a skill; its files are in ``skill_files`` under the same number.
skill_versions = sa.Table(
    "skill_versions",
    metadata,
    sa.Column("skill_id", ID, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    # created, edited, uploaded, proposed, reverted
    sa.Column("change", sa.String(16), nullable=False),
    sa.Column("reverted_from", sa.Integer, nullable=True),
    sa.Column("files", sa.Integer, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("created_by", ID, nullable=True),
    sa.Index(None, "team_id", "skill_id"),
)

skill_files = sa.Table(
    "skill_files",
    metadata,
    sa.Column("skill_id", ID, primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("path", sa.String(255), primary_key=True),
    sa.Column("team_id", ID, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Index(None, "team_id", "skill_id", "version"),
)

# The skills an admin enabled for an agent.
agent_skills = sa.Table(
    "agent_skills",
    metadata,
    sa.Column("team_id", ID, primary_key=True),
    sa.Column("agent_id", ID, primary_key=True),
    sa.Column("skill_id", ID, primary_key=True),
    sa.Column("enabled_at", TIME, nullable=False),
    sa.Column("enabled_by", ID, nullable=True),
    sa.Index(None, "team_id", "skill_id"),
)
