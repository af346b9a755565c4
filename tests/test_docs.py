"""The docs keep up with the code.

The README's links into docs/ and the docs pages' links to each other resolve, and every
interface is named on the page it belongs to: Team API routes with their arguments and
answers, capabilities, events and the values their fields take, the error codes a host
answers with, view-channel messages, agent tools and their arguments, settings, and the
commands (README.md's table equals what the CLI's --help lists). Each item is a test of
its own, whose failure names what is missing and where it goes.
"""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel

from peer.cli import build_parser as peer_parser
from server.cli import build_parser as server_parser
from server.common.error_codes import HOST_ANSWERS
from server.common.protocol import capabilities, view
from server.common.protocol.events import HOST_EVENTS
from server.config import settings_docs
from server.host.routes.tables import ROUTE_TABLES
from server.host.tools.catalog import CATALOG

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# [text](target): a relative Markdown link, with an optional #anchor.
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)\s#]*)(?:#([^)\s]*))?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchor_of(heading: str) -> str:
    """The anchor a heading gets on the forge that renders these pages: lower case,
    punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor_of(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+)$", text, re.MULTILINE)}


def links(page: Path) -> list[tuple[str, str | None]]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [(m.group(1), m.group(2)) for m in LINK.finditer(text)]


def broken_links(page: Path) -> list[str]:
    """Each relative link of ``page`` that names a missing file or a missing heading."""
    broken = []
    for target, anchor in links(page):
        path = (page.parent / target).resolve() if target else page
        if not path.is_file():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}#{anchor}: no such heading")
    return broken


def test_the_readme_links_every_docs_page() -> None:
    linked = {target for target, _ in links(ROOT / "README.md") if target.startswith("docs/")}
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md")}
    assert pages, "docs/ has no pages"
    assert pages <= linked, f"README.md does not link {sorted(pages - linked)}"


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda page: page.name
)
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == [], f"broken links in {page.relative_to(ROOT)}"


# Every interface a person or a client uses is documented: each item below is its own test,
# and its failure names what is missing and the page (and section) it belongs in.

TEAM_API = DOCS / "team-api.md"
AGENT_TOOLS = DOCS / "agent-tools.md"
SETTINGS = DOCS / "settings.md"
COMMANDS = DOCS / "commands.md"
README = ROOT / "README.md"


@functools.cache
def text_of(page: Path) -> str:
    """A page's text, read once for the many tests that look into it."""
    return page.read_text(encoding="utf-8")


def mentioned(name: str, page: Path) -> bool:
    """Whether ``page`` names ``name`` as code, in backticks."""
    return f"`{name}`" in text_of(page)


def route_names() -> list[tuple[str, str]]:
    """(route table capability, route name) of every Team API route the host serves."""
    return [(table.capability, route.name) for table in ROUTE_TABLES for route in table.routes]


def route_fields(side: str) -> list[tuple[str, str, str]]:
    """(route table capability, route name, field as on the wire) of every route's
    arguments (``side="args"``) or answer (``side="result"``), top level only."""
    return [
        (table.capability, route.name, field.alias or name)
        for table in ROUTE_TABLES
        for route in table.routes
        for name, field in getattr(route, side).model_fields.items()
    ]


def route_section(capability: str) -> str:
    """The text of docs/team-api.md under '### `<capability>`', up to the next heading."""
    text = text_of(TEAM_API)
    found = re.search(
        rf"^### `{re.escape(capability)}`\n(.*?)(?=^#)", text, re.MULTILINE | re.DOTALL
    )
    return found.group(1) if found else ""


def capability_names() -> list[str]:
    """Every name a host may list in ``capabilities``: its route tables' and the rest."""
    declared = [
        value
        for name, value in vars(capabilities).items()
        if name.isupper() and isinstance(value, str)
    ]
    names = [name for table in ROUTE_TABLES for name in table.capabilities]
    return sorted(set(names) | set(declared))


def literal_values(annotation: Any) -> set[str]:
    """The string values of every ``Literal`` in a field's type, models inside included."""
    if get_origin(annotation) is Literal:
        return {value for value in get_args(annotation) if isinstance(value, str)}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {
            value
            for field in annotation.model_fields.values()
            for value in literal_values(field.annotation)
        }
    return {value for arg in get_args(annotation) for value in literal_values(arg)}


def event_names() -> list[str]:
    """The name of every event a host pushes."""
    return [event.NAME for event in HOST_EVENTS]


def event_literals() -> list[tuple[str, str, str]]:
    """(event, field, value) for each literal an event's fields may carry."""
    found = []
    for event in HOST_EVENTS:
        for field_name, field in event.model_fields.items():
            wire_name = field.alias or field_name
            for value in sorted(literal_values(field.annotation)):
                found.append((event.NAME, wire_name, value))
    return found


def host_error_codes() -> list[str]:
    """Every error code a host may answer a peer with."""
    return [error.code for error in HOST_ANSWERS]


def view_message_types() -> list[str]:
    """The ``type`` of every message either end sends on a ``view:`` channel."""
    types: list[str] = []
    for union in (view.ViewMessage, view.HostViewMessage):
        members = get_args(get_args(union)[0])  # Annotated[Union[...], discriminator]
        for model in members:
            types.extend(get_args(model.model_fields["type"].annotation))
    return types


def tool_names() -> list[str]:
    """Every tool of the agents' catalog."""
    return list(CATALOG)


def tool_arguments() -> list[tuple[str, str]]:
    """(tool, argument as the model writes it) of every catalog tool."""
    return [
        (tool.name, field.alias or name)
        for tool in CATALOG.values()
        for name, field in tool.args.model_fields.items()
    ]


def setting_names() -> list[tuple[str, str]]:
    """(dotted path, environment variable) of every setting."""
    return [(".".join(doc.path), doc.env) for doc in settings_docs()]


def command_paths(parser: argparse.ArgumentParser, prefix: str) -> list[str]:
    """Every command a parser runs, as typed (``crewhost admin migrate``): the leaves of
    its sub-command tree, which is what each level's ``--help`` lists."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subparsers:
        return [prefix]
    paths = []
    for name, sub in subparsers[0].choices.items():
        paths.extend(command_paths(sub, f"{prefix} {name}"))
    return paths


def cli_commands() -> list[str]:
    """Every command of ``crewhost`` and ``crewhost-peer``."""
    return command_paths(server_parser(), "crewhost") + command_paths(
        peer_parser(), "crewhost-peer"
    )


def readme_commands() -> list[str]:
    """The commands of README.md's "Commands" table: each row's first cell, in backticks."""
    text = text_of(README)
    section = re.search(r"^## Commands\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert section, "README.md has no '## Commands' section"
    return re.findall(r"^\| `(crewhost[^`]*)` \|", section.group(1), re.MULTILINE)


@pytest.mark.parametrize(
    ("table", "route"), [pytest.param(table, route, id=route) for table, route in route_names()]
)
def test_every_route_is_documented(table: str, route: str) -> None:
    assert mentioned(route, TEAM_API), (
        f"route `{route}` is not in docs/team-api.md: add a row for it (least role, what it "
        f"does, its args, its answer, its errors) under '### `{table}`'"
    )


@pytest.mark.parametrize(
    ("table", "route", "argument"),
    [pytest.param(*found, id=f"{found[1]}:{found[2]}") for found in route_fields("args")],
)
def test_every_route_argument_is_documented(table: str, route: str, argument: str) -> None:
    assert f"`{argument}`" in route_section(table), (
        f"`{argument}`, an argument of `{route}`, is not in docs/team-api.md: say what it "
        f"takes in the `{route}` row under '### `{table}`'"
    )


@pytest.mark.parametrize(
    ("table", "route", "field"),
    [pytest.param(*found, id=f"{found[1]}->{found[2]}") for found in route_fields("result")],
)
def test_every_route_answer_field_is_documented(table: str, route: str, field: str) -> None:
    assert f"`{field}`" in route_section(table), (
        f"`{field}`, a field of the answer of `{route}`, is not in docs/team-api.md: say what "
        f"it holds in the `{route}` row under '### `{table}`'"
    )


@pytest.mark.parametrize("capability", capability_names())
def test_every_capability_is_documented(capability: str) -> None:
    assert mentioned(capability, TEAM_API), (
        f"capability `{capability}` is not in docs/team-api.md: name it, and what the host "
        "serves with it, under '## Capabilities'"
    )


@pytest.mark.parametrize("event", event_names())
def test_every_event_is_documented(event: str) -> None:
    assert mentioned(event, TEAM_API), (
        f"event `{event}` is not in docs/team-api.md: add a row for it (data, when it is "
        "sent, who receives it) to the table under '## Events'"
    )


@pytest.mark.parametrize(
    ("event", "field", "value"),
    [pytest.param(*found, id=f"{found[0]}.{found[1]}={found[2]}") for found in event_literals()],
)
def test_every_event_value_is_documented(event: str, field: str, value: str) -> None:
    assert mentioned(value, TEAM_API), (
        f"`{value}`, a value of `{field}` in the event `{event}`, is not in "
        f"docs/team-api.md: say what it means in the `{event}` row under '## Events'"
    )


@pytest.mark.parametrize("code", host_error_codes())
def test_every_host_error_code_is_documented(code: str) -> None:
    assert any(mentioned(code, page) for page in sorted(DOCS.glob("*.md"))), (
        f"error code `{code}` is not in docs/: add it, with when a host answers it, to the "
        "table under '## Errors' in docs/team-api.md (or the page of its subsystem)"
    )


@pytest.mark.parametrize("kind", view_message_types())
def test_every_view_message_is_documented(kind: str) -> None:
    page = text_of(DOCS / "live-view.md")
    assert f'"type": "{kind}"' in page or f"`{kind}`" in page, (
        f"the view message `{kind}` is not in docs/live-view.md: add it, with its fields and "
        "when it is sent, to the section of its feature"
    )


@pytest.mark.parametrize("tool", tool_names())
def test_every_agent_tool_is_documented(tool: str) -> None:
    assert mentioned(tool, AGENT_TOOLS), (
        f"tool `{tool}` is not in docs/agent-tools.md: add a row for it (free or gated, what "
        "it does, its arguments) to the tool catalog"
    )


@pytest.mark.parametrize(
    ("tool", "argument"),
    [pytest.param(tool, argument, id=f"{tool}:{argument}") for tool, argument in tool_arguments()],
)
def test_every_agent_tool_argument_is_documented(tool: str, argument: str) -> None:
    assert mentioned(argument, AGENT_TOOLS), (
        f"`{argument}`, an argument of the tool `{tool}`, is not in docs/agent-tools.md: "
        f"say what it takes in the `{tool}` row of the tool catalog"
    )


@pytest.mark.parametrize(
    ("setting", "env"), [pytest.param(path, env, id=path) for path, env in setting_names()]
)
def test_every_setting_is_documented(setting: str, env: str) -> None:
    missing = [name for name in (setting, env) if not mentioned(name, SETTINGS)]
    assert not missing, (
        f"setting `{setting}` ({', '.join(missing)} missing) is not in docs/settings.md: run "
        "`crewhost admin settings` and paste its table between the settings markers"
    )


@pytest.mark.parametrize("command", cli_commands())
def test_every_command_is_documented(command: str) -> None:
    assert command in readme_commands(), (
        f"`{command}` is not in README.md's commands table: add a row "
        f"'| `{command}` | <what it does, in one line> |' under '## Commands'"
    )
    assert mentioned(command, COMMANDS) or f"`{command} " in text_of(COMMANDS), (
        f"`{command}` is not in docs/commands.md: add a row for it with its options and exit codes"
    )


def test_the_readme_commands_table_is_the_cli() -> None:
    """README's commands table lists exactly what ``crewhost --help`` and
    ``crewhost-peer --help`` (and their sub-commands' ``--help``) list."""
    documented, actual = readme_commands(), cli_commands()
    assert len(documented) == len(set(documented)), "README.md lists a command twice"
    assert set(documented) == set(actual), (
        "README.md's commands table differs from the CLI: "
        f"not in the README {sorted(set(actual) - set(documented))}, "
        f"not a command {sorted(set(documented) - set(actual))}"
    )
