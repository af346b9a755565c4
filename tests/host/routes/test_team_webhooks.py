"""team-webhooks-v1 over real peers: owners and admins only, the secret answered once, the
address masked and judged, and a run published on the host's signal hub reaching a receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.host.agents.work_signals import RunFinished
from tests.host.routes.conftest import Roles, refused
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.webhook_receiver import HOST, WebhookReceiver, webhook_receiver
from tests.support.hub_server import RunningHub, hub_settings, running_hub
from tests.support.waiting import eventually


@pytest.fixture
async def server(
    tmp_path: Path, database: ScratchDatabase, clock: FakeClock
) -> AsyncIterator[RunningHub]:
    """The hub and its built-in host, which may send webhooks to the loopback receiver."""
    settings = hub_settings(tmp_path, database, **{"host.webhook_allowed_hosts": [HOST]})
    async with running_hub(settings, database, clock=clock) as running:
        yield running


@pytest.fixture
async def receiver() -> AsyncIterator[WebhookReceiver]:
    async with webhook_receiver([204]) as running:
        yield running


async def test_owners_and_admins_manage_webhooks_and_members_may_not(
    roles: Roles, receiver: WebhookReceiver
) -> None:
    args = {"name": "Ops", "url": receiver.url("/hook?token=s3cr3t"), "kinds": ["run.failed"]}
    assert await refused(roles.member, "team-webhooks-v1/create", args) == "forbidden"
    assert await refused(roles.member, "team-webhooks-v1/list", {}) == "forbidden"
    created = await roles.admin.call("team-webhooks-v1/create", args)
    assert created["secret"].startswith("whsec_")
    webhook = created["webhook"]
    assert webhook["url"] == f"http://{HOST}:{receiver.port}/••••"
    listed = await roles.owner.call("team-webhooks-v1/list")
    assert listed == {"webhooks": [webhook]}
    assert "s3cr3t" not in str(listed)
    assert created["secret"] not in str(listed)

    changed = await roles.owner.call(
        "team-webhooks-v1/update", {"id": webhook["id"], "kinds": ["run.finished", "run.failed"]}
    )
    assert changed["kinds"] == ["run.finished", "run.failed"]
    assert changed["url"] == webhook["url"]

    tested = await roles.owner.call("team-webhooks-v1/test", {"id": webhook["id"]})
    assert (tested["status"], tested["attempts"], tested["lastStatus"]) == ("delivered", 1, 204)
    [received] = receiver.received
    assert received.path_qs == "/hook?token=s3cr3t"
    assert received.signed_by(created["secret"])
    log = await roles.admin.call("team-webhooks-v1/deliveries", {"id": webhook["id"]})
    assert log["deliveries"] == [tested]

    ref = {"id": webhook["id"]}
    assert await refused(roles.member, "team-webhooks-v1/rotate_secret", ref) == "forbidden"
    rotated = await roles.admin.call("team-webhooks-v1/rotate_secret", ref)
    assert rotated["secret"] != created["secret"]
    assert rotated["previousValidUntil"] is not None
    await roles.owner.call("team-webhooks-v1/test", ref)
    assert receiver.received[-1].signed_by(rotated["secret"])
    assert receiver.received[-1].signed_by(created["secret"])

    assert await roles.admin.call("team-webhooks-v1/delete", {"id": webhook["id"]}) == {
        "deleted": True
    }
    assert await refused(roles.admin, "team-webhooks-v1/test", {"id": webhook["id"]}) == (
        "teamWebhookNotFound"
    )


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"url": "http://169.254.169.254/latest/meta-data"}, "webhookAddressRefused"),
        ({"url": "http://10.1.2.3/hook"}, "webhookAddressRefused"),
        ({"url": "gopher://hooks.example.com/"}, "invalidUrl"),
        ({"kinds": ["run.exploded"]}, "invalidArgument"),
        ({"bodyFormat": "xml"}, "invalidArgument"),
        ({"extra": 1}, "invalidArgument"),
    ],
)
async def test_refused_input_stores_nothing(
    roles: Roles, args: dict[str, object], code: str
) -> None:
    values: dict[str, object] = {"name": "x", "url": "http://10.1.2.3/", "kinds": ["run.failed"]}
    values.update(args)
    assert await refused(roles.admin, "team-webhooks-v1/create", values) == code
    assert await roles.admin.call("team-webhooks-v1/list") == {"webhooks": []}


async def test_a_run_published_on_the_hosts_signal_hub_reaches_the_receiver(
    server: RunningHub, roles: Roles, receiver: WebhookReceiver
) -> None:
    created = await roles.admin.call(
        "team-webhooks-v1/create",
        {"name": "Chat", "url": receiver.url(), "kinds": ["run.failed"], "bodyFormat": "slack"},
    )
    server.builtin.services.signals.publish(
        RunFinished(
            team_id=roles.team_id,
            agent_id="d" * 32,
            routine_id="e" * 32,
            routine_name="Nightly import",
            run_id="f" * 32,
            thread_id=None,
            status="interrupted",
            audience=(),
        )
    )
    await eventually(lambda: len(receiver.received) == 1)
    text = receiver.received[0].json()["text"]
    assert "Nightly import" in text
    assert "interrupted" in text
    assert receiver.received[0].signed_by(created["secret"])
