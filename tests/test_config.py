"""The settings model: every setting documented, sources in order, bad values refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.cli import build_parser
from server.common.errors import InvalidArgument
from server.config import iter_settings, load_settings, settings_docs, settings_markdown

SETTINGS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "settings.md"
START, END = "<!-- settings:start -->", "<!-- settings:end -->"


def test_every_setting_has_help_text() -> None:
    for path, info in iter_settings():
        assert info.description, ".".join(path)


def test_the_settings_page_documents_every_setting() -> None:
    page = SETTINGS_PAGE.read_text(encoding="utf-8")
    for marker in (START, END):
        assert marker in page, f"docs/settings.md lost its {marker} marker"
    table = page.split(START, 1)[1].split(END, 1)[0].strip("\n")
    assert table == settings_markdown(), (
        "docs/settings.md is out of date: run `crewhost admin settings` and paste its output "
        f"between {START} and {END}"
    )
    for doc in settings_docs():
        assert f"`{doc.env}`" in table


def test_file_then_environment_then_overrides(tmp_path: Path) -> None:
    config = tmp_path / "crewhost.toml"
    config.write_text('data_dir = "/srv/crew"\n[hub]\nport = 9000\nbind = "0.0.0.0"\n')
    settings = load_settings(
        config,
        env={"CREWHOST_HUB_PORT": "9100", "CREWHOST_CHROMIUM": "/opt/chromium"},
        overrides={"hub.bind": "127.0.0.2"},
    )
    assert settings.data_dir == Path("/srv/crew")
    assert settings.hub.port == 9100
    assert settings.hub.bind == "127.0.0.2"
    assert settings.host.chromium == "/opt/chromium"


def test_no_team_runs_stdio_mcp_servers_unless_the_operator_names_it() -> None:
    assert load_settings(env={}).host.mcp_stdio_teams == []
    named = load_settings(env={"CREWHOST_HOST_MCP_STDIO_TEAMS": "team-a, team-b"})
    assert named.host.mcp_stdio_teams == ["team-a", "team-b"]


def test_stdio_servers_are_sandboxed_unless_turned_off_and_listed_folders_are_absolute() -> None:
    host = load_settings(env={}).host
    assert (host.mcp_stdio_sandbox, host.mcp_stdio_network, host.mcp_stdio_paths) == (
        True,
        "proxied",
        [],
    )
    # The network was on or off before it named its kind: those words still read.
    for given, read in (("true", "proxied"), ("false", "none"), ("host", "host")):
        network = load_settings(env={"CREWHOST_HOST_MCP_STDIO_NETWORK": given}).host
        assert network.mcp_stdio_network == read
    with pytest.raises(InvalidArgument) as refused:
        load_settings(env={"CREWHOST_HOST_MCP_STDIO_NETWORK": "open"})
    assert refused.value.field == "host.mcp_stdio_network"
    listed = load_settings(env={"CREWHOST_HOST_MCP_STDIO_PATHS": "/opt/node, /srv/mcp/venv"})
    assert listed.host.mcp_stdio_paths == ["/opt/node", "/srv/mcp/venv"]
    with pytest.raises(InvalidArgument, match="'opt/node' is not an absolute path") as caught:
        load_settings(env={"CREWHOST_HOST_MCP_STDIO_PATHS": "opt/node"})
    assert caught.value.field == "host.mcp_stdio_paths"


def test_the_database_defaults_to_sqlite_in_the_data_folder(tmp_path: Path) -> None:
    settings = load_settings(env={"CREWHOST_DATA_DIR": str(tmp_path)})
    assert settings.database_url == f"sqlite+aiosqlite:///{tmp_path / 'crewhost.db'}"
    pg = load_settings(env={"CREWHOST_DATABASE_URL": "postgresql+asyncpg://db/crew"})
    assert pg.database_url == "postgresql+asyncpg://db/crew"


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({"CREWHOST_HUB_PORT": "eighty"}, "hub.port"),
        ({"CREWHOST_HUB_PORT": "70000"}, "hub.port"),
        ({"CREWHOST_HUB_OPEN_SIGNUP": "perhaps"}, "hub.open_signup"),
        ({"CREWHOST_LOG_FORMAT": "xml"}, "log.format"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        load_settings(env=env)
    assert caught.value.field == field


def test_unknown_keys_in_the_file_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "crewhost.toml"
    config.write_text("[hub]\nprot = 1\n")
    with pytest.raises(InvalidArgument, match=r"unknown field 'hub\.prot'"):
        load_settings(config, env={})


def test_an_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="cannot read config file"):
        load_settings(tmp_path / "missing.toml", env={})
    broken = tmp_path / "broken.toml"
    broken.write_text("[hub\n")
    with pytest.raises(InvalidArgument, match="not valid TOML"):
        load_settings(broken, env={})


def test_the_browser_allow_list_is_comma_separated_in_the_environment() -> None:
    settings = load_settings(
        env={
            "CREWHOST_HOST_BROWSER_ALLOWED_HOSTS": "127.0.0.1, localhost,",
            "CREWHOST_HOST_BROWSER_REFUSE_PRIVATE": "true",
        }
    )
    assert settings.host.browser_allowed_hosts == ["127.0.0.1", "localhost"]
    assert settings.host.browser_refuse_private
    assert load_settings(env={}).host.browser_allowed_hosts == []
    with pytest.raises(InvalidArgument, match="'localhost:3000' is not a host name") as caught:
        load_settings(env={"CREWHOST_HOST_BROWSER_ALLOWED_HOSTS": "localhost:3000"})
    assert caught.value.field == "host.browser_allowed_hosts"


def test_an_empty_data_dir_is_refused(tmp_path: Path) -> None:
    # An empty path would be the current folder, made private and filled.
    config = tmp_path / "crewhost.toml"
    config.write_text('data_dir = ""\n')
    for given in ({"env": {"CREWHOST_DATA_DIR": ""}}, {"config_file": config, "env": {}}):
        with pytest.raises(InvalidArgument) as refused:
            load_settings(**given)
        assert refused.value.field == "data_dir"
        assert "CREWHOST_DATA_DIR" in refused.value.message
    with pytest.raises(SystemExit):
        build_parser().parse_args(["admin", "migrate", "--data-dir", ""])


def test_a_section_that_is_not_a_table_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "crewhost.toml"
    config.write_text("hub = 5\n")
    for env, overrides in (({"CREWHOST_HUB_PORT": "9000"}, {}), ({}, {"hub.bind": "127.0.0.2"})):
        with pytest.raises(InvalidArgument) as refused:
            load_settings(config, env=env, overrides=overrides)
        assert (
            refused.value.message == "bad setting: 'hub' must be a table ([hub]) in the config file"
        )
