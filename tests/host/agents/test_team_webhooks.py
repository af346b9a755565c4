"""TeamWebhookService on both databases: events from the signal hub become signed, durable
deliveries, retried with backoff against a local receiver, under the address policy."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa

from server.common.crypto.box import SecretBox
from server.common.crypto.ring import KeyRing
from server.common.errors import CrewhostError, InvalidArgument
from server.common.public_addresses import PublicOnlyPolicy
from server.db.engine import Database
from server.db.tables import team_webhook_deliveries, team_webhooks
from server.host.agents.team_webhook_events import app_link
from server.host.agents.team_webhook_sender import MAX_ATTEMPTS, RETRY_DELAYS, WebhookSender
from server.host.agents.team_webhooks import (
    KEEP_SECONDS,
    LEASE_SECONDS,
    ROTATION_OVERLAP_SECONDS,
    TURNED_OFF,
    TeamWebhookService,
)
from server.host.agents.work_signals import AttentionWaiting, RunFinished
from server.host.signals import Signals
from server.host.storage.team_webhooks import TeamWebhookRepository
from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.fakes.webhook_receiver import HOST, WebhookReceiver, webhook_receiver
from tests.support.resolvers import TableResolver
from tests.support.waiting import eventually

TEAM_A, TEAM_B = "a" * 32, "b" * 32
ACCOUNT = "c" * 32
SLACK_TOKEN = "T0000/B0000/XXXXsecretTOKENxxxx"


@pytest.fixture
async def db(database: ScratchDatabase) -> AsyncIterator[Database]:
    opened = database.open()
    await opened.migrate()
    yield opened
    await opened.close()


@pytest.fixture
async def receiver() -> AsyncIterator[WebhookReceiver]:
    async with webhook_receiver([500, 503, 204]) as running:
        yield running


def sender_for(receiver: WebhookReceiver, resolver: TableResolver | None = None) -> WebhookSender:
    """The public-only policy, with only the receiver's own endpoint allowed besides."""
    policy = PublicOnlyPolicy(
        allowed_endpoints=frozenset({(ipaddress.ip_address(HOST), receiver.port)})
    )
    return WebhookSender(policy, resolver or TableResolver({}))


@pytest.fixture
def box() -> SecretBox:
    return SecretBox(KeyRing.generate())


@pytest.fixture
def service(
    db: Database, clock: FakeClock, box: SecretBox, receiver: WebhookReceiver
) -> TeamWebhookService:
    resolver = TableResolver({"hooks.example.com": ["93.184.216.34"]})
    return TeamWebhookService(db, clock, box, sender_for(receiver, resolver), link="/app/")


def hub(service: TeamWebhookService) -> Signals:
    """A signal hub subscribed as the host's container subscribes the service."""
    signals = Signals()
    signals.subscribe(RunFinished, service.run_finished)
    signals.subscribe(AttentionWaiting, service.attention_waiting)
    return signals


def run(status: str = "done", team_id: str = TEAM_A) -> RunFinished:
    return RunFinished(
        team_id=team_id,
        agent_id="d" * 32,
        routine_id="e" * 32,
        routine_name="Morning report",
        run_id="f" * 32,
        thread_id="1" * 32,
        status=status,  # type: ignore[arg-type]
        audience=(ACCOUNT,),
        reason="the provider's key sk-live-123 was refused" if status != "done" else None,
    )


def waiting(*, routine_id: str | None, whole_team: bool = False) -> AttentionWaiting:
    return AttentionWaiting(
        team_id=TEAM_A,
        agent_id="d" * 32,
        thread_id="1" * 32,
        request_id="2" * 32,
        kind="consent",
        description="Submit the order form on shop.example",
        addressed_to=(ACCOUNT,),
        expires_at=1_800_000_000.0,
        routine_id=routine_id,
        whole_team=whole_team,
    )


async def test_a_run_is_retried_with_backoff_and_signed_every_time(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock
) -> None:
    view, secret = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.finished", "run.failed"]
    )
    assert secret.startswith("whsec_")
    await hub(service).deliver(run("done"))

    assert await service.deliver_due() == 1
    [entry] = await service.list_deliveries(TEAM_A, view.id)
    assert (entry.status, entry.attempts, entry.last_status) == ("pending", 1, 500)
    assert entry.next_attempt_at is not None
    assert entry.next_attempt_at - clock.now() == pytest.approx(RETRY_DELAYS[0], abs=1)
    assert await service.deliver_due() == 0  # not due before its delay

    clock.advance(RETRY_DELAYS[0])
    assert await service.deliver_due() == 1
    clock.advance(RETRY_DELAYS[1])
    assert await service.deliver_due() == 1
    [entry] = await service.list_deliveries(TEAM_A, view.id)
    assert (entry.status, entry.attempts, entry.last_status) == ("delivered", 3, 204)
    assert entry.next_attempt_at is None
    assert entry.last_error is None

    assert len(receiver.received) == 3
    assert {r.headers["webhook-id"] for r in receiver.received} == {entry.id}
    assert all(r.signed_by(secret) for r in receiver.received)
    assert not receiver.received[0].signed_by("whsec_" + "A" * 44)
    body = receiver.received[-1].json()
    assert body["type"] == "run.finished"
    assert body["data"]["routineName"] == "Morning report"
    assert body["data"]["status"] == "done"
    assert body["data"]["link"] == "/app/"


async def test_six_attempts_at_most_then_failed(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock
) -> None:
    receiver.statuses = [500]
    view, _ = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.failed"]
    )
    await hub(service).deliver(run("error"))
    await service.deliver_due()
    for delay in RETRY_DELAYS:
        clock.advance(delay)
        assert await service.deliver_due() == 1
    clock.advance(7 * 86400)
    assert await service.deliver_due() == 0
    [entry] = await service.list_deliveries(TEAM_A, view.id)
    assert (entry.status, entry.attempts) == ("failed", MAX_ATTEMPTS)
    assert entry.last_error == "answered HTTP 500"
    assert len(receiver.received) == MAX_ATTEMPTS == 6
    assert sum(RETRY_DELAYS) / 3600 == pytest.approx(23.2, abs=1)


async def test_slack_bodies_are_text_and_kinds_choose_the_events(
    service: TeamWebhookService, receiver: WebhookReceiver
) -> None:
    receiver.statuses = [200]
    await service.create_webhook(
        TEAM_A,
        ACCOUNT,
        name="Slack",
        url=receiver.url("/services/" + SLACK_TOKEN),
        kinds=["run.failed"],
        body_format="slack",
    )
    signals = hub(service)
    await signals.deliver(run("done"))  # not a kind it wants
    await signals.deliver(run("error", team_id=TEAM_B))  # another team's
    await signals.deliver(run("budget"))
    await service.deliver_due()
    [received] = receiver.received
    assert received.path_qs == "/services/" + SLACK_TOKEN
    text = received.json()
    assert list(text) == ["text"]
    assert "Morning report" in text["text"]
    assert "/app/" not in text["text"]  # no address of the hub to link to
    assert "budget" in text["text"]
    assert "sk-live-123" not in received.body.decode()  # a run's reason is not sent


async def test_only_a_routines_or_shared_threads_waiting_request_is_told(
    service: TeamWebhookService, receiver: WebhookReceiver
) -> None:
    receiver.statuses = [204]
    await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["approval.waiting"]
    )
    signals = hub(service)
    await signals.deliver(waiting(routine_id=None))  # a private chat's: stays with its member
    await signals.deliver(waiting(routine_id="e" * 32))
    await signals.deliver(waiting(routine_id=None, whole_team=True))
    await service.deliver_due()
    assert len(receiver.received) == 2
    data = receiver.received[0].json()["data"]
    assert data["description"] == "Submit the order form on shop.example"
    assert data["waitingKind"] == "consent"
    assert data["agentName"] == "An agent"  # the agent is not in this database


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://10.0.0.8/hook",
        "http://metadata.example/hook",  # a name that resolves to the metadata address
    ],
)
async def test_addresses_that_are_not_public_are_refused_and_nothing_is_stored(
    db: Database, clock: FakeClock, box: SecretBox, url: str
) -> None:
    resolver = TableResolver({"metadata.example": ["169.254.169.254"]})
    service = TeamWebhookService(db, clock, box, WebhookSender(PublicOnlyPolicy(), resolver))
    with pytest.raises(CrewhostError) as refused:
        await service.create_webhook(TEAM_A, ACCOUNT, name="x", url=url, kinds=["run.failed"])
    assert refused.value.code == "webhookAddressRefused"
    assert refused.value.field == "url"
    assert await service.list_webhooks(TEAM_A) == []


async def test_the_host_setting_allows_an_on_premises_receiver(
    db: Database, clock: FakeClock, box: SecretBox, receiver: WebhookReceiver
) -> None:
    policy = PublicOnlyPolicy.from_entries([HOST])
    service = TeamWebhookService(db, clock, box, WebhookSender(policy))
    view, _ = await service.create_webhook(
        TEAM_A, ACCOUNT, name="On site", url=receiver.url(), kinds=["run.failed"]
    )
    receiver.statuses = [204]
    assert (await service.send_test(TEAM_A, view.id)).status == "delivered"


@pytest.mark.parametrize(
    ("field", "args"),
    [
        ("url", {"url": "ftp://hooks.example.com/x"}),
        ("url", {"url": "https://user:pw@hooks.example.com/x"}),
        ("url", {"url": "not an address"}),
        ("kinds", {"kinds": []}),
        ("kinds", {"kinds": ["run.exploded"]}),
        ("bodyFormat", {"body_format": "xml"}),
        ("name", {"name": "  "}),
    ],
)
async def test_bad_input_names_its_field_and_stores_nothing(
    service: TeamWebhookService, field: str, args: dict[str, object]
) -> None:
    values: dict[str, object] = {
        "name": "x",
        "url": "https://hooks.example.com/x",
        "kinds": ["run.failed"],
    }
    values.update(args)
    with pytest.raises(InvalidArgument) as refused:
        await service.create_webhook(TEAM_A, ACCOUNT, **values)  # type: ignore[arg-type]
    assert refused.value.field == field
    assert await service.list_webhooks(TEAM_A) == []


async def test_the_secret_part_of_an_address_is_sealed_masked_and_never_logged(
    service: TeamWebhookService, db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"https://hooks.example.com/services/{SLACK_TOKEN}?channel=ops"
    view, secret = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Slack", url=url, kinds=["run.failed"], body_format="slack"
    )
    assert view.url == "https://hooks.example.com/••••"
    [listed] = await service.list_webhooks(TEAM_A)
    assert listed.url == view.url
    assert await service.list_webhooks(TEAM_B) == []
    async with db.read() as conn:
        rows = [dict(r._mapping) for r in await conn.execute(sa.select(team_webhooks))]
    stored = repr(rows).encode() + b"".join(
        value for row in rows for value in row.values() if isinstance(value, bytes)
    )
    for part in (SLACK_TOKEN, "channel=ops", secret.removeprefix("whsec_")):
        assert part.encode() not in stored
        assert part not in caplog.text
    changed = await service.update_webhook(TEAM_A, view.id, name="Renamed", enabled=False)
    assert (changed.name, changed.enabled, changed.url) == ("Renamed", False, view.url)


async def test_deliveries_survive_a_restart_and_a_lapsed_lease(
    db: Database, clock: FakeClock, box: SecretBox, receiver: WebhookReceiver
) -> None:
    first = TeamWebhookService(db, clock, box, sender_for(receiver))
    view, secret = await first.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.finished"]
    )
    await hub(first).deliver(run("done"))
    await hub(first).deliver(run("done"))
    await first.deliver_due()  # both answered 500 and 503
    # A sender that took one and stopped before it answered (the host went down):
    async with db.read() as conn:
        due = await TeamWebhookRepository().list_due(conn, clock.now() + 3600, 10)
    async with db.write() as conn:
        assert await TeamWebhookRepository().claim_delivery(conn, due[0], clock.now() + 3600)

    receiver.statuses = [204]
    second = TeamWebhookService(db, clock, box, sender_for(receiver))  # the host's restart
    clock.advance(RETRY_DELAYS[0])
    assert await second.deliver_due() == 1  # the other one waits for its lease
    clock.advance(3600 + LEASE_SECONDS)
    assert await second.deliver_due() == 1
    entries = await second.list_deliveries(TEAM_A, view.id)
    assert [(e.status, e.attempts) for e in entries] == [("delivered", 2), ("delivered", 2)]
    assert all(r.signed_by(secret) for r in receiver.received)


async def test_the_sender_loop_delivers_without_being_asked(
    service: TeamWebhookService, receiver: WebhookReceiver
) -> None:
    receiver.statuses = [204]
    _view, secret = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.finished"]
    )
    async with service:
        await hub(service).deliver(run("done"))
        await eventually(lambda: len(receiver.received) == 1)
    assert receiver.received[0].signed_by(secret)


async def test_turning_a_webhook_off_ends_its_queued_deliveries(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock
) -> None:
    receiver.statuses = [500]
    view, _ = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.failed"]
    )
    await hub(service).deliver(run("error"))
    assert await service.deliver_due() == 1  # answered 500: a retry is queued
    await service.update_webhook(TEAM_A, view.id, enabled=False)
    [entry] = await service.list_deliveries(TEAM_A, view.id)
    assert (entry.status, entry.attempts, entry.last_error) == ("failed", 1, TURNED_OFF)
    assert entry.next_attempt_at is None
    for delay in RETRY_DELAYS:
        clock.advance(delay)
        await service.deliver_due()
    assert len(receiver.received) == 1
    # A test an admin asks for still goes: one attempt, now.
    tested = await service.send_test(TEAM_A, view.id)
    assert (tested.status, tested.attempts, tested.last_status) == ("failed", 1, 500)
    assert len(receiver.received) == 2


async def test_a_due_delivery_of_a_webhook_turned_off_elsewhere_is_not_sent(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock, db: Database
) -> None:
    """Turned off past the service (another host on the same database, or between its
    look at the log and the retry): the sender ends the delivery when it comes due."""
    receiver.statuses = [500]
    view, _ = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.failed"]
    )
    await hub(service).deliver(run("error"))
    await service.deliver_due()
    async with db.write() as conn:
        await conn.execute(
            team_webhooks.update().where(team_webhooks.c.id == view.id).values(enabled=False)
        )
    clock.advance(RETRY_DELAYS[0])
    assert await service.deliver_due() == 1
    assert await service.deliver_due() == 0  # ended: not taken again
    assert len(receiver.received) == 1
    [entry] = await service.list_deliveries(TEAM_A, view.id)
    assert (entry.status, entry.attempts, entry.last_error) == ("failed", 1, TURNED_OFF)
    assert entry.next_attempt_at is None


async def test_deleting_a_webhook_stops_its_queued_retries(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock
) -> None:
    receiver.statuses = [500]
    view, _ = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.failed"]
    )
    await hub(service).deliver(run("error"))
    await service.deliver_due()
    await service.delete_webhook(TEAM_A, view.id)
    clock.advance(RETRY_DELAYS[0])
    assert await service.deliver_due() == 0
    assert len(receiver.received) == 1
    with pytest.raises(CrewhostError) as missing:
        await service.list_deliveries(TEAM_A, view.id)
    assert missing.value.code == "teamWebhookNotFound"


async def test_a_test_event_is_one_attempt_and_deleting_drops_the_log(
    service: TeamWebhookService, receiver: WebhookReceiver, db: Database
) -> None:
    view, secret = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.finished"]
    )
    failed = await service.send_test(TEAM_A, view.id)
    assert (failed.status, failed.attempts, failed.last_status) == ("failed", 1, 500)
    assert receiver.received[0].json()["type"] == "webhook.test"
    assert receiver.received[0].signed_by(secret)
    with pytest.raises(CrewhostError) as missing:
        await service.send_test(TEAM_B, view.id)
    assert missing.value.code == "teamWebhookNotFound"
    await service.delete_webhook(TEAM_A, view.id)
    async with db.read() as conn:
        count = sa.select(sa.func.count()).select_from(team_webhook_deliveries)
        left = (await conn.execute(count)).scalar()
    assert left == 0


async def test_finished_deliveries_leave_the_log_after_thirty_days_pending_ones_stay(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock
) -> None:
    receiver.statuses = [204, 500]
    view, _ = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.finished"]
    )
    await hub(service).deliver(run("done"))
    await service.deliver_due()  # delivered
    await hub(service).deliver(run("done"))
    await service.deliver_due()  # pending, retried in a minute
    clock.advance(KEEP_SECONDS - 3600)
    assert await service.prune() == 0
    clock.advance(3600)
    assert await service.prune() == 1
    [left] = await service.list_deliveries(TEAM_A, view.id)
    assert left.status == "pending"


async def test_a_receiver_that_takes_its_time_holds_up_no_other(
    db: Database, clock: FakeClock, box: SecretBox
) -> None:
    release = asyncio.Event()
    async with (
        webhook_receiver([204]) as slow,
        webhook_receiver([204]) as quick,
    ):
        slow.hold = release
        policy = PublicOnlyPolicy.from_entries([HOST])
        service = TeamWebhookService(db, clock, box, WebhookSender(policy))
        for name, receiver in (("slow", slow), ("quick", quick)):
            await service.create_webhook(
                TEAM_A, ACCOUNT, name=name, url=receiver.url(), kinds=["run.finished"]
            )
        await hub(service).deliver(run("done"))
        sending = asyncio.ensure_future(service.deliver_due())
        await eventually(lambda: len(quick.received) == len(slow.received) == 1)
        assert not sending.done()
        release.set()
        assert await sending == 2


async def test_a_rotated_secret_signs_at_once_and_the_one_before_for_a_day(
    service: TeamWebhookService, receiver: WebhookReceiver, clock: FakeClock
) -> None:
    receiver.statuses = [204]
    view, first = await service.create_webhook(
        TEAM_A, ACCOUNT, name="Ops", url=receiver.url(), kinds=["run.finished"]
    )
    second, until = await service.rotate_secret(TEAM_A, view.id)
    assert second != first
    assert until == pytest.approx(clock.now() + ROTATION_OVERLAP_SECONDS, abs=1)
    await service.send_test(TEAM_A, view.id)
    received = receiver.received[-1]
    assert received.signed_by(second)
    assert received.signed_by(first)
    assert len(received.headers["webhook-signature"].split(" ")) == 2

    clock.advance(ROTATION_OVERLAP_SECONDS + 1)
    await service.send_test(TEAM_A, view.id)
    received = receiver.received[-1]
    assert received.signed_by(second)
    assert not received.signed_by(first)
    with pytest.raises(CrewhostError) as missing:
        await service.rotate_secret(TEAM_B, view.id)
    assert missing.value.code == "teamWebhookNotFound"


async def test_chat_text_links_the_web_client_when_the_hubs_address_is_known(
    db: Database, clock: FakeClock, box: SecretBox, receiver: WebhookReceiver
) -> None:
    receiver.statuses = [204]
    link = app_link("https://crew.example.com/")
    assert link == "https://crew.example.com/app/"
    assert app_link(None) == "/app/"
    service = TeamWebhookService(db, clock, box, sender_for(receiver), link=link)
    for body_format in ("slack", "standard"):
        await service.create_webhook(
            TEAM_A,
            ACCOUNT,
            name=body_format,
            url=receiver.url(f"/{body_format}"),
            kinds=["approval.waiting"],
            body_format=body_format,
        )
    await hub(service).deliver(waiting(routine_id="e" * 32))
    await service.deliver_due()
    bodies = {r.path_qs: r.json() for r in receiver.received}
    assert bodies["/slack"]["text"] == (
        "An agent waits for an approval: Submit the order form on shop.example "
        "Open Crewhost: https://crew.example.com/app/"
    )
    assert bodies["/standard"]["data"]["link"] == link
