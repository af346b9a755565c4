"""The host's metrics on the hub's ``/metrics`` after real peer traffic, the request id in
the hub's and the host's log lines of one connection, and ``/metrics`` of a host apart."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from peer.connection import TeamApiCallError
from peer.live_view import open_view
from server.common import process_tree
from server.common.request_ids import REQUEST_ID_HEADER
from server.host.browser.partitions import Partition
from server.host.metrics import HostMetrics
from server.host.metrics_endpoint import metrics_endpoint
from server.logs import log_handler
from tests.support.databases import ScratchDatabase, scratch_database
from tests.support.fakes.anthropic import FakeAnthropic, MessageEvents
from tests.support.hub_server import RunningHub
from tests.support.peers import owner_peer, peer_member, wait_linked
from tests.support.sites import Site, pages_app, serving
from tests.support.waiting import eventually

ANTHROPIC_KEY = "sk-ant-metrics-test-key"
ROOT = Path(__file__).resolve().parents[2]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[ScratchDatabase]:
    """Metrics are about the host's traffic, not storage: SQLite only."""
    async with scratch_database("sqlite", tmp_path) as db:
        yield db


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with serving(pages_app({"/": "<!doctype html><p>measured</p>"})) as running:
        yield running


@pytest.fixture
async def anthropic() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic(api_key=ANTHROPIC_KEY) as fake:
        yield fake


def parse(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(server: RunningHub) -> Samples:
    reply = await server.client().get("/metrics")
    assert reply.status == 200
    return parse(reply.raw.decode())


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


Check = Callable[[Samples, Samples, Samples], bool]


def moved(name: str, **labels: str) -> Check:
    """The sample grew between the scrape before the activity and the one during it."""
    return lambda before, during, _after: (
        value(during, name, **labels) > value(before, name, **labels)
    )


def present(name: str, **labels: str) -> Check:
    """A gauge of the process itself: it reads above zero while the host runs."""
    return lambda _before, during, _after: value(during, name, **labels) > 0


def listed(name: str) -> Check:
    """The sample is on /metrics (at any value)."""
    return lambda _before, during, _after: (name, ()) in during


# Every metric docs/operations.md lists, the activity of the test below that moves it, and
# how that shows on /metrics (scraped before, during and after the activity).
# The model of the turn below: the built-in Anthropic provider's default, which has a price.
TURN_MODEL = "claude-sonnet-4-5"
MOVES: dict[str, tuple[str, Check]] = {
    "crewhost_http_requests_total": (
        "the sign-ins",
        moved("crewhost_http_requests_total", route="/v1/sessions", method="POST", status="201"),
    ),
    "crewhost_http_request_seconds": (
        "the sign-ins",
        moved("crewhost_http_request_seconds_count", route="/v1/sessions"),
    ),
    "crewhost_sign_ins_total": (
        # The account's five failures (its burst) and the unknown email's one.
        "a sign-in, wrong passwords, an unknown email, then one attempt too many",
        lambda before, during, after: all(
            value(during, "crewhost_sign_ins_total", outcome=outcome)
            - value(before, "crewhost_sign_ins_total", outcome=outcome)
            == count
            for outcome, count in (("ok", 1), ("badPassword", 6), ("limited", 1))
        ),
    ),
    "crewhost_peers_connected": (
        "a peer connects, then closes",
        lambda before, during, after: (
            (
                value(before, "crewhost_peers_connected"),
                value(during, "crewhost_peers_connected"),
                value(after, "crewhost_peers_connected"),
            )
            == (0, 1, 0)
        ),
    ),
    "crewhost_data_channel_bytes_total": (
        "Team API calls and a live view",
        lambda before, during, after: all(
            moved("crewhost_data_channel_bytes_total", direction=direction, kind=kind)(
                before, during, after
            )
            for direction, kind in (("in", "team-api"), ("out", "team-api"), ("out", "view"))
        ),
    ),
    "crewhost_team_api_calls_total": (
        "capabilities, and a route the host does not serve",
        lambda before, during, after: (
            moved("crewhost_team_api_calls_total", route="capabilities", status="ok")(
                before, during, after
            )
            and value(
                during, "crewhost_team_api_calls_total", route="unknown", status="routeUnknown"
            )
            == 1
        ),
    ),
    "crewhost_team_api_call_seconds": (
        "capabilities",
        moved("crewhost_team_api_call_seconds_count", route="capabilities"),
    ),
    "crewhost_live_view_frames_total": (
        "a live view's first frame",
        moved("crewhost_live_view_frames_total", outcome="sent"),
    ),
    "crewhost_live_view_dropped_frames_per_view": (
        "the live view closes",
        lambda before, during, after: (
            (
                value(after, "crewhost_live_view_dropped_frames_per_view_count")
                - value(during, "crewhost_live_view_dropped_frames_per_view_count")
            )
            == 1
        ),
    ),
    "crewhost_tabs": ("a tab opens", moved("crewhost_tabs", state="loaded")),
    "crewhost_chromium_processes": (
        "the tab's browser runs",
        present("crewhost_chromium_processes", type="browser"),
    ),
    "crewhost_chromium_resident_bytes": (
        "the tab's renderer runs",
        present("crewhost_chromium_resident_bytes", type="renderer"),
    ),
    "crewhost_turns_total": ("an agent's turn ends", moved("crewhost_turns_total", status="done")),
    "crewhost_provider_request_seconds": (
        "the turn asks the model",
        moved("crewhost_provider_request_seconds_count", outcome="ok"),
    ),
    "crewhost_model_tokens_total": (
        "the turn's model request is recorded",
        moved("crewhost_model_tokens_total", provider="anthropic", model=TURN_MODEL, kind="input"),
    ),
    "crewhost_model_cost_usd_total": (
        "the turn's model request is priced",
        moved("crewhost_model_cost_usd_total", provider="anthropic", model=TURN_MODEL),
    ),
    "crewhost_host_table_entries": (
        "a peer and a view are open",
        lambda before, during, after: (
            value(during, "crewhost_host_table_entries", table="peers") == 1
            and value(during, "crewhost_host_table_entries", table="views") == 1
        ),
    ),
    # Moved by turns past their team's places: tests/host/routes/test_turn_slots.py (this
    # host's teams have ten places each).
    "crewhost_turns_waiting": ("the host runs", listed("crewhost_turns_waiting")),
    "crewhost_turns_waited_total": ("the host runs", listed("crewhost_turns_waited_total")),
    "crewhost_asyncio_tasks": ("the host runs", present("crewhost_asyncio_tasks")),
    "crewhost_process_threads": ("the host runs", present("crewhost_process_threads")),
    "process_open_fds": ("the host runs", present("process_open_fds")),
    "process_resident_memory_bytes": ("the host runs", present("process_resident_memory_bytes")),
    "process_cpu_seconds_total": ("the host works", present("process_cpu_seconds_total")),
}


def documented_metrics() -> list[str]:
    """The metric names of the table under "## Metrics" in docs/operations.md."""
    text = (ROOT / "docs/operations.md").read_text(encoding="utf-8")
    section = text.split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [
        name
        for row in rows
        for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])
        if name.startswith(("crewhost_", "process_"))
    ]


async def test_every_documented_metric_moves_under_its_activity(
    server: RunningHub, site: Site, anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    before = await scrape(server)
    member = await peer_member(server, "owner@example.com", tmp_path)  # signs in: ok
    stranger = server.client()
    for email in ("owner@example.com", "nobody@example.com"):
        refused = await stranger.post("/v1/sessions", {"email": email, "password": "wrong-guess"})
        assert refused.code == "badCredentials"
    # The account's failures from one address run out after its burst: the next is limited.
    burst = server.hub.settings.security.signin_failures_per_account_burst
    attempts = [
        await stranger.post("/v1/sessions", {"email": "owner@example.com", "password": "no"})
        for _ in range(burst)
    ]
    assert [a.code for a in attempts] == ["badCredentials"] * (burst - 1) + ["rateLimited"]
    connection = await member.connect(host_id)

    await connection.call("capabilities")
    with pytest.raises(TeamApiCallError):
        await connection.call("no-such-route/v1")
    await connection.call(
        "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
    )
    await connection.call("providers-v1/set_key", {"provider": "anthropic", "key": ANTHROPIC_KEY})
    agent = await connection.call("agents-v1/create", {"name": "Gauge"})
    thread = await connection.call("threads-v1/start", {"agentId": agent["id"], "title": "t"})
    anthropic.script(MessageEvents().text("Measured.").stop().reply())
    await connection.call("threads-v1/send", {"threadId": thread["id"], "text": "Hi"})
    engine = await server.builtin.services.browser.engine()
    tab = await engine.open_tab(team_id, Partition.shared(), url=site.url("/"))
    view = await open_view(connection, tab.id)
    await view.next_frame()
    await server.builtin.services.threads.wait_idle(thread["id"])
    during = await scrape(server)
    view.close()
    await connection.close()
    await eventually(lambda: not server.builtin.services.peers.peers())
    after = await scrape(server)
    await member.hub.close()

    documented = documented_metrics()
    assert documented, "no metric table found in docs/operations.md"
    unlisted = [name for name in documented if name not in MOVES]
    assert not unlisted, f"documented metrics with no activity in MOVES: {unlisted}"
    still = [
        f"{name} ({MOVES[name][0]})"
        for name in documented
        if not MOVES[name][1](before, during, after)
    ]
    assert not still, f"documented metrics that did not move under their activity: {still}"
    # The hub's own families are served beside the host's.
    assert any(name == "crewhost_http_requests_total" for name, _ in during)


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """Every log record as the JSON line ``--log-format json`` writes."""
    stream = io.StringIO()
    handler = log_handler("json", stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


async def test_a_connections_request_id_is_in_the_hub_and_host_log_lines(
    server: RunningHub, tmp_path: Path, json_lines: io.StringIO
) -> None:
    host_id, member = await owner_peer(server, tmp_path)
    connection = await member.connect(host_id)
    await connection.close()
    # The host logs the close once the connection has ended, after it forgot the peer.
    await eventually(lambda: '"peer closed"' in json_lines.getvalue())
    await member.hub.close()

    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    relayed = [line for line in lines if line["message"] == "relaying an offer"]
    assert len(relayed) == 1
    request_id = relayed[0]["request_id"]
    of_request = [line for line in lines if line.get("request_id") == request_id]
    hub_lines = {line["message"] for line in of_request if line["logger"].startswith("server.hub")}
    host_lines = {
        line["message"] for line in of_request if line["logger"].startswith("server.host")
    }
    assert "relaying an offer" in hub_lines
    assert {"peer accepted", "peer closed"} <= host_lines


async def test_every_hub_answer_names_its_request_id(server: RunningHub) -> None:
    first = await server.client().get("/healthz")
    second = await server.client().get("/healthz")
    ids = {first.headers[REQUEST_ID_HEADER], second.headers[REQUEST_ID_HEADER]}
    assert len(ids) == 2


async def test_a_separate_host_serves_its_metrics_at_the_listen_address() -> None:
    metrics = HostMetrics()
    metrics.team_api_answered("capabilities", "ok", 0.002)
    async with (
        metrics_endpoint(metrics, "127.0.0.1:0") as url,
        aiohttp.ClientSession() as session,
        session.get(url) as reply,
    ):
        samples = parse(await reply.text())
    assert value(samples, "crewhost_team_api_calls_total", route="capabilities", status="ok") == 1


def test_making_the_metrics_walks_no_process_and_a_scrape_still_counts_chromium(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Registering the scrape-time gauges reads their names only: walking every process of
    a busy machine on the loop at start-up stalled it for most of a second."""
    walks: list[int] = []

    def walk() -> dict[int, list[int]]:
        walks.append(1)
        return {}

    monkeypatch.setattr(process_tree, "children_by_parent", walk)
    metrics = HostMetrics()
    assert walks == []
    names = {f.name for f in text_string_to_metric_families(metrics.registry_text().decode())}
    assert {"crewhost_chromium_processes", "crewhost_asyncio_tasks"} <= names
    assert walks == [1]
