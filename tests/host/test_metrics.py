"""The host's metrics on the hub's ``/metrics`` after real peer traffic, the request id in
the hub's and the host's log lines of one connection, and ``/metrics`` of a host apart."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from peer.connection import TeamApiCallError
from peer.live_view import open_view
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


async def test_metrics_move_with_peer_traffic(
    server: RunningHub, site: Site, anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    host_id = await wait_linked(server)
    before = await scrape(server)
    member = await peer_member(server, "owner@example.com", tmp_path)
    connection = await member.connect(host_id)

    await connection.call("capabilities")
    with pytest.raises(TeamApiCallError):
        await connection.call("no-such-route/v1")
    await connection.call("providers-v1/set_key", {"provider": "anthropic", "key": ANTHROPIC_KEY})
    await connection.call(
        "providers-v1/update", {"provider": "anthropic", "baseUrl": anthropic.base_url}
    )
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

    assert value(before, "crewhost_peers_connected") == 0
    assert value(during, "crewhost_peers_connected") == 1
    assert value(after, "crewhost_peers_connected") == 0
    assert value(during, "crewhost_host_table_entries", table="peers") == 1
    assert value(during, "crewhost_host_table_entries", table="views") == 1
    for direction, kind in (("in", "team-api"), ("out", "team-api"), ("out", "view")):
        moved = value(during, "crewhost_data_channel_bytes_total", direction=direction, kind=kind)
        assert moved > 0, (direction, kind)
    # The view asks for capabilities too.
    assert value(during, "crewhost_team_api_calls_total", route="capabilities", status="ok") >= 1
    assert (
        value(during, "crewhost_team_api_calls_total", route="unknown", status="routeUnknown") == 1
    )
    assert value(during, "crewhost_team_api_call_seconds_count", route="capabilities") >= 1
    assert value(during, "crewhost_live_view_frames_total", outcome="sent") >= 1
    assert value(after, "crewhost_live_view_dropped_frames_per_view_count") == 1
    assert value(during, "crewhost_tabs", state="loaded") == 1
    assert value(during, "crewhost_chromium_processes", type="browser") >= 1
    assert value(during, "crewhost_chromium_resident_bytes", type="renderer") > 0
    assert value(during, "crewhost_turns_total", status="done") == 1
    assert value(during, "crewhost_provider_request_seconds_count", outcome="ok") == 1
    assert value(during, "crewhost_asyncio_tasks") > 0
    assert value(during, "crewhost_process_threads") >= 1
    assert value(during, "process_open_fds") > 0
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
