"""The one settings model, read from a TOML file and ``CREWHOST_*`` variables here only.

Each field of a section maps to ``CREWHOST_<SECTION>_<FIELD>`` (``hub.port`` is
``CREWHOST_HUB_PORT``); top-level fields drop the section (``CREWHOST_DATA_DIR``);
a field may name its own variable with ``env=`` (``CREWHOST_CHROMIUM``).
Precedence, lowest first: defaults, the config file, the environment, command-line flags.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo

from server.common.browser_address_policy import parse_allowed_host
from server.common.errors import InvalidArgument
from server.common.protocol.view import MAX_VIEW_MESSAGE
from server.common.wire import invalid_argument_from

ENV_PREFIX = "CREWHOST_"
CONFIG_ENV = "CREWHOST_CONFIG"


class SettingsSection(BaseModel):
    """A frozen section of the settings; unknown keys are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class HubSettings(SettingsSection):
    bind: str = Field("127.0.0.1", description="Address the hub listens on.")
    port: int = Field(8750, ge=0, le=65535, description="TCP port of the hub (0 picks a free one).")
    public_url: str | None = Field(
        None,
        description="The address members use (https://crew.example.com); it sets the allowed "
        "Origin and the links the hub prints. Empty: taken from each request.",
    )
    trust_forwarded: bool = Field(
        False,
        description="Behind a TLS reverse proxy: take the scheme, host and client address "
        "from X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-For.",
    )
    open_signup: bool = Field(
        False, description="Let anyone create an account without an invitation."
    )
    max_json_body_bytes: int = Field(
        65536, ge=1024, description="Largest JSON request body the hub reads."
    )
    access_log: bool = Field(False, description="Log one line per HTTP request.")
    link_lease_seconds: float = Field(
        60.0,
        ge=3,
        description="A host counts as online while the hub holding its link renews it within "
        "this many seconds (the hosts of a hub that crashed go offline after it).",
    )
    hook_burst: int = Field(
        60,
        ge=1,
        description="Deliveries one webhook trigger may send at once before it is answered 429.",
    )
    hook_refill_seconds: float = Field(
        1.0,
        gt=0,
        description="A webhook trigger earns back one delivery of its burst every this many "
        "seconds.",
    )


class DatabaseSettings(SettingsSection):
    url: str | None = Field(
        None,
        description="SQLAlchemy URL; empty means SQLite (WAL) at <data_dir>/crewhost.db. "
        "PostgreSQL: postgresql+asyncpg://user@host/db.",
    )
    pool_size: int = Field(
        10,
        ge=1,
        description="Connections kept open to PostgreSQL (as many again while busy), and at most "
        "as many more for the request path's lookups.",
    )
    sqlite_read_connections: int = Field(
        4,
        ge=1,
        description="SQLite connections for reads other than the request path's lookups (which "
        "have one on the event loop's thread; writes have one of their own).",
    )
    sqlite_migration_copies: int = Field(
        3,
        ge=0,
        description="Before a start or `admin migrate` changes a SQLite database's schema, a "
        "copy of it is kept beside it (crewhost.db.before-REVISION-TIME); this many of the "
        "newest are kept. 0 keeps none.",
    )


class SecuritySettings(SettingsSection):
    session_idle_seconds: int = Field(
        14 * 86400, ge=60, description="A session unused this long is signed out."
    )
    session_max_seconds: int = Field(
        30 * 86400, ge=60, description="A session ends this long after sign-in, used or not."
    )
    password_hash_time_cost: int = Field(3, ge=1, description="argon2id passes.")
    password_hash_memory_kib: int = Field(65536, ge=8, description="argon2id memory in KiB.")
    password_hash_parallelism: int = Field(2, ge=1, description="argon2id lanes.")
    signin_per_address_burst: int = Field(
        30,
        ge=1,
        description="Sign-in attempts one client address may make at once. Sign-up attempts "
        "count apart, under the same limit.",
    )
    signin_per_address_refill_seconds: float = Field(
        2.0, gt=0, description="One more attempt for an address after this many seconds."
    )
    signin_failures_per_account_burst: int = Field(
        5, ge=1, description="Failed sign-ins for one account from one address before a wait."
    )
    signin_failures_per_account_refill_seconds: float = Field(
        30.0,
        gt=0,
        description="One more failed attempt per account and address after this many seconds "
        "(short, so nobody can lock a real user out for long).",
    )
    signin_failures_account_wide_burst: int = Field(
        50, ge=1, description="Failed sign-ins for one account from all addresses before a wait."
    )
    signin_failures_account_wide_refill_seconds: float = Field(
        1.0, gt=0, description="One more account-wide failed attempt after this many seconds."
    )


class HostSettings(SettingsSection):
    name: str = Field("Built-in host", description="Name of the built-in host of crewhost serve.")
    metrics_listen: str | None = Field(
        None,
        pattern=r"^[^\s]+:\d{1,5}$",
        description="Address (host:port) where crewhost host serves its Prometheus metrics at "
        "/metrics. Empty: not served. crewhost serve ignores it: the hub's /metrics carries "
        "the built-in host's.",
    )
    master_passphrase: SecretStr | None = Field(
        None,
        description="Passphrase that wraps the host's key ring (<data_dir>/host/key-ring.json, "
        "the keys of provider keys, vault items and proxy passwords) through scrypt. Empty: "
        "the ring is a 0600 file readable by whoever can read the data folder. Once set, the "
        "host does not start without it.",
        json_schema_extra={"env": "CREWHOST_MASTER_PASSPHRASE"},
    )
    chromium: str | None = Field(
        None,
        description="Path to the Chromium binary; empty: Playwright's build, then the system "
        "chromium. Chromium's headless shell (/usr/bin/chromium-headless-shell) opens tabs "
        "faster with half the memory per profile, but pages can tell it from Chrome.",
        json_schema_extra={"env": "CREWHOST_CHROMIUM"},
    )
    browser_locale: str = Field(
        "en-GB", description="Language of browser pages; its base language is added (en-GB,en)."
    )
    browser_tab_deadline: float = Field(
        30.0, gt=0, description="Seconds one tab operation may run before it fails (tabDeadline)."
    )
    browser_idle_unload: float = Field(
        900.0, gt=0, description="Seconds idle before a tab's page unloads; it reloads on next use."
    )
    browser_idle_unload_low_memory: float = Field(
        300.0, gt=0, description="The same, while available memory is low."
    )
    browser_low_memory_bytes: int = Field(
        512 * 1024 * 1024, ge=0, description="Below this much available memory, memory is low."
    )
    browser_loaded_idle_tabs: int = Field(
        3, ge=0, description="Idle tabs kept loaded before the least recently used sleep."
    )
    browser_lru_idle: float = Field(
        120.0, gt=0, description="Seconds idle before a tab beyond that count sleeps."
    )
    browser_cpu_nice: int = Field(
        5,
        ge=0,
        le=19,
        description="How far below the host Chromium runs on the CPU (a nice value; 0: the "
        "same). A busy browser then never keeps the host, which serves every person's calls "
        "and live views, waiting for a CPU. The browsers share it (the shared profile's, the "
        "private tabs', each named profile's in use): each goes lower, so that together they "
        "weigh what one browser at this value would.",
    )
    live_view_quality: int = Field(
        70, ge=10, le=100, description="JPEG quality of live-view frames."
    )
    live_view_max_fps: float = Field(
        30.0, gt=0, le=60, description="Most live-view frames per second sent for one tab."
    )
    browser_sweep_seconds: float = Field(
        30.0, gt=0, description="Seconds between sweeps that put idle tabs to sleep."
    )
    search_url: str = Field(
        "https://duckduckgo.com/?q={query}",
        pattern=r"^https?://[^\s]*\{query\}",
        description="Where a search phrase a person or an agent types as an address goes; "
        "{query} is the phrase.",
    )
    browser_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, IP addresses and CIDR ranges the browsers may reach although "
        "a rule refuses them, comma-separated (127.0.0.1,localhost). Otherwise browsers reach "
        "public addresses only: never the host's loopback (127/8, ::1, localhost, "
        "*.localhost), the host's own interface addresses, link-local addresses (169.254/16, "
        "fe80::/10: cloud metadata), unspecified ones (0.0.0.0, ::) or any other "
        "special-purpose address (100.64/10, documentation ranges, …), in any IPv6 form "
        "that carries one.",
    )
    browser_refuse_private: bool = Field(
        True,
        description="Refuse the browsers private network addresses (10/8, 172.16/12, "
        "192.168/16, fc00::/7), except those in browser_allowed_hosts. false: browsers may "
        "reach every private network address.",
    )
    proxy_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, IP addresses and CIDR ranges a browser proxy's own address "
        "may be although they are not public, comma-separated (an on-premises proxy: "
        "proxy.corp.example,10.2.0.0/16). Otherwise a proxy at loopback, a private, "
        "link-local (cloud metadata) or other special-purpose address, or one of the host's "
        "own addresses, is refused (proxyAddressRefused) when saved and at every connection.",
    )

    web_fetch_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, IP addresses and CIDR ranges that agents' web_fetch may reach "
        "although they are not public, comma-separated (intranet.example,10.1.0.0/16). "
        "Otherwise web_fetch reaches public addresses only: never loopback, private, "
        "link-local (cloud metadata) or any other special-purpose address.",
    )
    webhook_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, IP addresses and CIDR ranges a team webhook may be sent to "
        "although they are not public, comma-separated (an on-premises chat server: "
        "chat.corp.example,10.3.0.0/16). Otherwise a webhook at loopback, a private, "
        "link-local (cloud metadata) or other special-purpose address, or one of the host's "
        "own addresses, is refused (webhookAddressRefused) when saved and at every attempt.",
    )
    mcp_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, IP addresses and CIDR ranges an HTTP MCP server may be at "
        "although they are not public, comma-separated (an on-premises tracker: "
        "mcp.corp.example,10.3.0.0/16). Otherwise an MCP server at loopback, a private, "
        "link-local (cloud metadata) or other special-purpose address, or one of the host's "
        "own addresses, is refused (mcpAddressRefused) when saved and at every connection. "
        "The same list is what a sandboxed stdio server reaches through its proxy besides "
        "public addresses (host.mcp_stdio_network).",
    )
    mcp_stdio_teams: list[str] = Field(
        default_factory=list,
        description="The teams (ids, comma-separated, or * for every team) whose admins may "
        "add stdio MCP servers. A stdio server is a command the host runs: in the sandbox "
        "(host.mcp_stdio_sandbox) it sees the system's programs, its own folder and what "
        "host.mcp_stdio_paths lists, but it still runs code of the admin's choosing on this "
        "machine, with the network if host.mcp_stdio_network allows; without the sandbox it "
        "can read whatever the host can, the data folder of every team included. So by "
        "default no team may (mcpStdioNotAllowed). Allow it for the one team of a host that "
        "serves one, or for teams whose admins are trusted with the machine.",
    )
    mcp_stdio_sandbox: bool = Field(
        True,
        description="Run each stdio MCP server in a sandbox (bubblewrap's bwrap, Debian's "
        "bubblewrap package): namespaces of its own, as nobody, seeing /usr and the files of "
        "/etc a program needs read-only, the folders of host.mcp_stdio_paths read-only, its "
        "own folder (its home) read-write, a /tmp of its own and its own processes alone; "
        "never the host's data folder or another team's files. Without bwrap, or where this "
        "machine allows the host's user no user namespace, a stdio server does not start and "
        "its status says why. Off: the server runs as the host's own user and sees what the "
        "host sees.",
    )
    mcp_stdio_paths: list[str] = Field(
        default_factory=list,
        description="More folders a sandboxed stdio MCP server sees, read-only, "
        "comma-separated: where its program or runtime is installed outside /usr "
        "(/opt/node,/srv/mcp/venv). A command outside what the sandbox shows does not start "
        "(its status names this setting).",
    )
    mcp_stdio_network: Literal["none", "proxied", "host"] = Field(
        "proxied",
        description="The network of a sandboxed stdio MCP server. proxied: a network of its "
        "own whose one way out is an HTTP proxy the host serves inside it (HTTP_PROXY and "
        "HTTPS_PROXY are set), reaching public addresses and what host.mcp_allowed_hosts "
        "allows, never the host's loopback, the LAN or cloud metadata; a program that ignores "
        "those variables reaches nothing (Node.js reads them from release 24 with "
        "NODE_USE_ENV_PROXY, which the host sets, and before through a preload the host "
        "gives it for fetch and the http and https modules). "
        "none: nothing but its own loopback, for servers that work on files alone. host: "
        "what the host reaches, services on the host's loopback included (its database "
        "among them). true and false read as proxied and none.",
    )
    provider_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names, IP addresses and CIDR ranges a team's model provider or "
        "SearXNG instance may be at although they are not public, comma-separated (a model "
        "server on this machine or the LAN: 127.0.0.1,llm.corp.example,10.4.0.0/16). "
        "Otherwise one at loopback, a private, link-local (cloud metadata) or other "
        "special-purpose address, or one of the host's own addresses, is refused "
        "(providerAddressRefused) when saved and, for a name, at every connection.",
    )
    mcp_idle_seconds: float = Field(
        600.0,
        gt=0,
        description="How long an MCP server's session stays open with no call; then it is "
        "closed (a stdio server's process ends) until an agent needs it again.",
    )
    mcp_start_seconds: float = Field(
        30.0,
        gt=0,
        description="How long an MCP server has to start and answer initialize and its tool "
        "list; a server that takes longer shows the status error.",
    )
    workspace_agent_max_files: int = Field(
        1000,
        ge=1,
        description="Most files and folders one agent's workspace may hold (workspaceAgentFull).",
    )
    workspace_agent_max_bytes: int = Field(
        100 * 1024 * 1024,
        ge=1,
        description="Most bytes one agent's workspace may hold (workspaceAgentFull).",
    )
    workspace_team_max_files: int = Field(
        10_000,
        ge=1,
        description="Most files and folders a team's workspaces (every agent's and the shared "
        "one) may hold together (workspaceTeamFull).",
    )
    workspace_team_max_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=1,
        description="Most bytes a team's workspaces may hold together (workspaceTeamFull).",
    )
    workspace_file_max_bytes: int = Field(
        25 * 1024 * 1024,
        ge=1,
        description="Largest file a workspace takes, written by an agent or uploaded by a "
        "member (workspaceFileTooLarge).",
    )
    workspace_upload_seconds: float = Field(
        600.0, gt=0, description="An unfinished upload to a workspace is dropped after this."
    )
    attachment_max_bytes: int = Field(
        20 * 1024 * 1024,
        ge=1,
        description="Largest file a member may attach to a chat message (attachmentTooLarge).",
    )
    ask_user_seconds: float = Field(
        300.0,
        gt=0,
        description="How long an agent's ask_user question waits for an answer before the "
        "agent is told it timed out.",
    )
    memory_review_seconds: float = Field(
        30.0,
        ge=0,
        description="How long an agent must be quiet after a turn ends before its model "
        "reviews the turn for memories to keep.",
    )
    team_running_turns: int = Field(
        10,
        ge=0,
        le=10_000,
        description="How many agent turns one team runs at once on this host; further turns "
        "wait, shown as waiting, until one ends (0: no limit).",
    )
    memory_prompt_tokens: int = Field(
        2000,
        ge=0,
        description="How many tokens (about four characters each) of an agent's memories "
        "without a site each turn's system prompt carries; essential ones always go.",
    )

    @field_validator(
        "browser_allowed_hosts",
        "web_fetch_allowed_hosts",
        "proxy_allowed_hosts",
        "webhook_allowed_hosts",
        "mcp_allowed_hosts",
        "provider_allowed_hosts",
        "mcp_stdio_teams",
        "mcp_stdio_paths",
        mode="before",
    )
    @classmethod
    def _split_allowed_hosts(cls, value: Any) -> Any:
        # The environment gives one comma-separated string; a config file gives a list.
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator(
        "browser_allowed_hosts",
        "web_fetch_allowed_hosts",
        "proxy_allowed_hosts",
        "webhook_allowed_hosts",
        "mcp_allowed_hosts",
        "provider_allowed_hosts",
    )
    @classmethod
    def _check_allowed_hosts(cls, value: list[str]) -> list[str]:
        for entry in value:
            parse_allowed_host(entry)
        return value

    @field_validator("mcp_stdio_network", mode="before")
    @classmethod
    def _read_stdio_network(cls, value: Any) -> Any:
        # The setting was on or off before it named the kind of network.
        if isinstance(value, bool):
            return "proxied" if value else "none"
        if isinstance(value, str):
            spelled = value.strip().lower()
            return {"true": "proxied", "1": "proxied", "false": "none", "0": "none"}.get(
                spelled, spelled
            )
        return value

    @field_validator("mcp_stdio_paths")
    @classmethod
    def _check_stdio_paths(cls, value: list[str]) -> list[str]:
        for entry in value:
            if not entry.startswith("/"):
                raise ValueError(f"{entry!r} is not an absolute path")
        return value


class IceServer(SettingsSection):
    urls: list[str] = Field(description="stun:host:port or turn:host:port?transport=udp")
    username: str | None = Field(None, description="TURN user name.")
    credential: str | None = Field(None, description="TURN password.")


class RtcSettings(SettingsSection):
    ice_servers: list[IceServer] = Field(
        default_factory=list,
        description='STUN/TURN servers as JSON: [{"urls": ["turn:turn.example.com:3478"]}]. '
        "Empty: host candidates only. A TURN server without username gets a credential per "
        "peer from turn_secret.",
    )
    turn_secret: SecretStr | None = Field(
        None,
        description="The TURN server's shared secret (coturn static-auth-secret): peers get "
        "short-lived credentials made from it, never the secret.",
    )
    turn_credential_seconds: int = Field(
        3600, ge=60, le=86400, description="How long a TURN credential given to a peer lasts."
    )
    team_api_rate: float = Field(
        50.0,
        gt=0,
        description=(
            "Team API requests per second one member of a team may make, on average, "
            "across all their peers."
        ),
    )
    team_api_burst: int = Field(
        200,
        ge=1,
        description="Team API requests one member may make at once, across all their peers.",
    )
    team_api_in_flight: int = Field(
        32,
        ge=1,
        description=(
            "Team API requests one member may have running at the same time, across all "
            "their peers."
        ),
    )
    connect_seconds: float = Field(
        30.0,
        gt=0,
        description="A peer that has not connected this long after its answer is dropped.",
    )
    max_message_bytes: int = Field(
        2 * 1024 * 1024,
        # Each fragment is counted with its bookkeeping: the largest message needs headroom.
        ge=3 * MAX_VIEW_MESSAGE // 2,
        description="Most bytes a host holds for one peer's unfinished data-channel messages "
        "(fragments counted with their bookkeeping); a peer that sends more is disconnected. "
        "At least 1.5 times the largest view message (a 1 MiB clipboard and its envelope).",
    )
    sctp_bundling: bool = Field(
        True,
        description="Delay SACKs and bundle data-channel chunks into shared packets, as "
        "RFC 4960 allows (fewer datagrams per message); off: aiortc's one packet per chunk.",
    )


class LogSettings(SettingsSection):
    format: Literal["text", "json"] = Field(
        "text", description="text: readable lines; json: one JSON object per line."
    )
    level: Literal["debug", "info", "warning", "error"] = Field("info", description="Log level.")


class Settings(SettingsSection):
    """Everything Crewhost can be told, with a default for each."""

    data_dir: Path = Field(
        Path("./crewhost-data"), description="Folder for the database, keys and browser profiles."
    )
    event_loop: Literal["auto", "uvloop", "asyncio"] = Field(
        "auto",
        description="Event loop of serve, hub and host: auto is uvloop when it is installed.",
    )
    hub: HubSettings = HubSettings()
    database: DatabaseSettings = DatabaseSettings()
    security: SecuritySettings = SecuritySettings()
    host: HostSettings = HostSettings()
    rtc: RtcSettings = RtcSettings()
    log: LogSettings = LogSettings()

    @field_validator("data_dir", mode="before")
    @classmethod
    def _refuse_an_empty_data_dir(cls, value: Any) -> Any:
        # An empty path is the current folder: a command would make it private and fill it.
        if isinstance(value, str) and not value.strip():
            raise ValueError("is empty: name the data folder (CREWHOST_DATA_DIR)")
        return value

    @property
    def database_url(self) -> str:
        if self.database.url:
            return self.database.url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'crewhost.db').resolve()}"


@dataclass(frozen=True)
class SettingDoc:
    """One documented setting, as the README table lists it."""

    path: tuple[str, ...]
    env: str
    default: Any
    description: str


def _env_name(path: tuple[str, ...], info: FieldInfo) -> str:
    extra = info.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("env"), str):
        return str(extra["env"])
    return ENV_PREFIX + "_".join(part.upper() for part in path)


def iter_settings() -> Iterator[tuple[tuple[str, ...], FieldInfo]]:
    """Every leaf setting with its path, sections first-to-last as declared."""
    for name, info in Settings.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, SettingsSection):
            for sub_name, sub_info in annotation.model_fields.items():
                yield (name, sub_name), sub_info
        else:
            yield (name,), info


def settings_docs() -> list[SettingDoc]:
    """The documentation of every setting, generated from the model."""
    docs = []
    for path, info in iter_settings():
        default = info.get_default(call_default_factory=True)
        docs.append(SettingDoc(path, _env_name(path, info), default, info.description or ""))
    return docs


def settings_markdown() -> str:
    """A Markdown table of every setting (the README's settings section)."""
    lines = ["| setting | environment | default | meaning |", "| --- | --- | --- | --- |"]
    for doc in settings_docs():
        default = "" if doc.default is None else str(doc.default)
        lines.append(f"| `{'.'.join(doc.path)}` | `{doc.env}` | `{default}` | {doc.description} |")
    return "\n".join(lines)


def _parse_env_value(raw: str, info: FieldInfo) -> Any:
    # Structured values (lists, tables) are written as JSON; scalars are left to pydantic.
    if raw.strip().startswith(("[", "{")):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    if raw == "" and info.default is None:
        return None
    return raw


def _set_path(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for depth, part in enumerate(path[:-1], start=1):
        section: Any = target.setdefault(part, {})
        if not isinstance(section, dict):
            name = ".".join(path[:depth])
            raise InvalidArgument(
                f"bad setting: '{name}' must be a table ([{name}]) in the config file",
                field=name,
            )
        target = section
    target[path[-1]] = value


def load_settings(
    config_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Read the settings: defaults < config file < environment < ``overrides`` (dotted keys)."""
    env = os.environ if env is None else env
    raw: dict[str, Any] = {}
    path = config_file or (Path(env[CONFIG_ENV]) if env.get(CONFIG_ENV) else None)
    if path is not None:
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InvalidArgument(f"cannot read config file {path}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise InvalidArgument(f"config file {path} is not valid TOML: {exc}") from exc
    known = {_env_name(p, info): (p, info) for p, info in iter_settings()}
    for name, value in env.items():
        if name in known:
            setting_path, info = known[name]
            _set_path(raw, setting_path, _parse_env_value(value, info))
    for dotted, value in (overrides or {}).items():
        if value is not None:
            _set_path(raw, tuple(dotted.split(".")), value)
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        error = invalid_argument_from(exc)
        raise InvalidArgument(f"bad setting: {error.message}", field=error.field) from exc
