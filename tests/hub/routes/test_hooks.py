"""``POST /v1/hooks/{hookId}``: a real hub on each database, deliveries signed by the
``standardwebhooks`` package as a sender signs them."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
import sqlalchemy as sa
from standardwebhooks.webhooks import Webhook

from server.common.errors import InvalidArgument
from server.common.protocol.hooks import MAX_HOOK_BODY, FieldEquals, HookFilters, new_secret
from server.common.roles import Role
from server.common.tokens import new_id
from server.db.tables import hub_hook_deliveries
from server.host.services.workspace import Member
from server.hub.services.hooks import REPLAY_WINDOW, Accepted, SignatureCheck
from server.hub.storage.hooks import PENDING, SKIPPED, HubDelivery
from tests.support.clock import FakeClock
from tests.support.hub_server import RunningHub
from tests.support.routine_runs import RecordingRuns

TEAM = "7" * 32
ROUTINE = "8" * 32
OWNER = Member(TEAM, "9" * 32, Role.OWNER)


@pytest.fixture(autouse=True)
def owners_manage_triggers(server: RunningHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are the hub's: any routine id will do, and owners manage its triggers."""
    monkeypatch.setattr(server.builtin.services.routine_hooks, "runs", RecordingRuns())


async def add_hook(
    server: RunningHub, *, filters: HookFilters | None = None, enabled: bool = True
) -> tuple[str, str]:
    """A hook made on the built-in host and registered over its link: (id, secret)."""
    made = await server.builtin.services.routine_hooks.create_hook(
        OWNER, ROUTINE, filters or HookFilters(), enabled=enabled
    )
    await hub_has(server, made.hook.id, made.secret)
    return made.hook.id, made.secret


async def hub_has(server: RunningHub, hook_id: str, secret: str) -> None:
    """Wait until the hub holds the hook with ``secret`` as its current one."""
    async with asyncio.timeout(20):
        while True:
            hook = await server.hub.hooks._repo.lookup_hook(server.hub.db, hook_id)
            if hook is not None and hook.secret == secret:
                return
            await asyncio.sleep(0.02)


def signed(
    secret: str, body: bytes, clock: FakeClock, *, webhook_id: str | None = None, skew: float = 0
) -> dict[str, str]:
    webhook_id = webhook_id or "msg_" + new_id()
    when = datetime.fromtimestamp(int(clock.now() + skew), tz=UTC)
    signature = Webhook(secret).sign(webhook_id, when, body)
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": signature,
        "content-type": "application/json",
    }


async def post(
    server: RunningHub, hook_id: str, body: bytes, headers: dict[str, str]
) -> tuple[int, Any, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{server.url}/v1/hooks/{hook_id}", data=body, headers=headers) as reply,
    ):
        return reply.status, await reply.json(), reply.headers


BODY = json.dumps({"type": "issue.opened", "data": {"action": "opened", "n": 3}}).encode()


async def test_a_signed_delivery_is_kept_for_the_host(server: RunningHub, clock: FakeClock) -> None:
    hook_id, secret = await add_hook(server)
    status, body, _ = await post(server, hook_id, BODY, signed(secret, BODY, clock))
    assert status == 202
    assert body["status"] == "accepted"
    async with server.hub.db.read() as conn:
        row = (
            await conn.execute(
                hub_hook_deliveries.select().where(hub_hook_deliveries.c.id == body["id"])
            )
        ).one()
    assert row.hook_id == hook_id
    assert row.team_id == TEAM
    assert row.body == BODY.decode() or row.status != PENDING  # the host may have taken it


async def test_a_replayed_webhook_id_is_refused(server: RunningHub, clock: FakeClock) -> None:
    hook_id, secret = await add_hook(server)
    headers = signed(secret, BODY, clock)
    assert (await post(server, hook_id, BODY, headers))[0] == 202
    status, body, _ = await post(server, hook_id, BODY, headers)
    assert (status, body["error"]["code"]) == (409, "hookReplayed")
    # Signed anew (another timestamp) but the same webhook-id: a replay still.
    clock.advance(60)
    again = signed(secret, BODY, clock, webhook_id=headers["webhook-id"])
    assert (await post(server, hook_id, BODY, again))[0] == 409


async def test_replays_sent_at_once_store_one_delivery(
    server: RunningHub, clock: FakeClock
) -> None:
    """Deliveries that arrive together are written together: a replay among them is still
    refused, and every other one stored."""
    hook_id, secret = await add_hook(server)
    headers = signed(secret, BODY, clock)
    others = [signed(secret, BODY, clock) for _ in range(5)]
    answers = await asyncio.gather(
        *(post(server, hook_id, BODY, h) for h in [headers] * 5 + others)
    )
    statuses = [status for status, _, _ in answers]
    assert sorted(statuses[:5]) == [202, 409, 409, 409, 409]
    assert statuses[5:] == [202] * 5
    async with server.hub.db.read() as conn:
        count = (
            await conn.execute(
                sa.select(sa.func.count())
                .select_from(hub_hook_deliveries)
                .where(hub_hook_deliveries.c.hook_id == hook_id)
            )
        ).scalar_one()
    assert count == 6


async def test_a_webhook_id_is_forgotten_after_the_replay_window(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, secret = await add_hook(server, filters=HookFilters(event_types=["other"]))
    headers = signed(secret, BODY, clock)
    assert (await post(server, hook_id, BODY, headers))[1]["status"] == "skipped"
    clock.advance(REPLAY_WINDOW + 1)
    assert await server.hub.hooks.prune() == 1
    fresh = signed(secret, BODY, clock, webhook_id=headers["webhook-id"])
    assert (await post(server, hook_id, BODY, fresh))[0] == 202


@pytest.mark.parametrize(
    "tamper",
    ["body", "secret", "old", "future", "no-id", "no-signature", "garbage-signature", "v2"],
)
async def test_a_bad_signature_is_401_without_saying_why(
    server: RunningHub, clock: FakeClock, tamper: str
) -> None:
    hook_id, secret = await add_hook(server)
    body = BODY
    headers = signed(secret, BODY, clock)
    if tamper == "body":
        body = BODY.replace(b"opened", b"closed")
    elif tamper == "secret":
        headers = signed(new_secret(), BODY, clock)
    elif tamper == "old":
        headers = signed(secret, BODY, clock, skew=-301)
    elif tamper == "future":
        headers = signed(secret, BODY, clock, skew=301)
    elif tamper == "no-id":
        del headers["webhook-id"]
    elif tamper == "no-signature":
        del headers["webhook-signature"]
    elif tamper == "garbage-signature":
        headers["webhook-signature"] = "v1,@@@ v1 nonsense"
    else:
        headers["webhook-signature"] = headers["webhook-signature"].replace("v1,", "v2,")
    status, answer, _ = await post(server, hook_id, body, headers)
    assert (status, answer["error"]["code"]) == (401, "hookSignature")
    assert answer["error"]["message"] == "the delivery's signature does not check out"


async def test_a_timestamp_too_long_for_a_number_is_refused_like_any_bad_one(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, secret = await add_hook(server)
    headers = signed(secret, BODY, clock) | {"webhook-timestamp": "9" * 400}
    status, answer, _ = await post(server, hook_id, BODY, headers)
    assert (status, answer["error"]["code"]) == (401, "hookSignature")
    status, answer, _ = await post(server, new_id(), BODY, headers)
    assert (status, answer["error"]["code"]) == (404, "hookNotFound")


async def test_a_timestamp_within_five_minutes_is_accepted(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, secret = await add_hook(server)
    for skew in (-290, 290):
        assert (await post(server, hook_id, BODY, signed(secret, BODY, clock, skew=skew)))[0] == 202


async def test_an_oversize_body_is_413(server: RunningHub, clock: FakeClock) -> None:
    hook_id, secret = await add_hook(server)
    big = b'{"x": "' + b"a" * MAX_HOOK_BODY + b'"}'
    status, answer, _ = await post(server, hook_id, big, signed(secret, big, clock))
    assert (status, answer["error"]["code"]) == (413, "payloadTooLarge")

    async def chunks() -> Any:  # no Content-Length: the hub stops reading at the limit
        for _ in range(MAX_HOOK_BODY // 65536 + 2):
            yield b"a" * 65536

    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{server.url}/v1/hooks/{hook_id}", data=chunks(), headers=signed(secret, b"", clock)
        ) as reply,
    ):
        assert reply.status == 413


async def deliveries_of(server: RunningHub, hook_id: str) -> int:
    async with server.hub.db.read() as conn:
        return (
            await conn.execute(
                sa.select(sa.func.count())
                .select_from(hub_hook_deliveries)
                .where(hub_hook_deliveries.c.hook_id == hook_id)
            )
        ).scalar_one()


@pytest.mark.parametrize("body", [b'{"note": "a NUL \x00 byte"}', b'{"latin-1": "\xe9"}'])
async def test_a_body_the_hub_cannot_keep_as_text_is_400_on_both_databases(
    server: RunningHub, clock: FakeClock, body: bytes
) -> None:
    """PostgreSQL's text holds no NUL, and the body is kept as UTF-8 text."""
    hook_id, secret = await add_hook(server)
    status, answer, _ = await post(server, hook_id, body, signed(secret, body, clock))
    assert (status, answer["error"]["code"]) == (400, "invalidArgument")
    assert await deliveries_of(server, hook_id) == 0


async def test_deliveries_written_with_a_refused_one_are_kept(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, secret = await add_hook(server)
    bad = b"a NUL \x00 byte"
    bodies = [BODY, BODY, bad, BODY, BODY, BODY]
    results = await asyncio.gather(
        *(server.hub.hooks.receive(hook_id, signed(secret, b, clock), b) for b in bodies),
        return_exceptions=True,
    )
    assert [type(r) for r in results] == [Accepted] * 2 + [InvalidArgument] + [Accepted] * 3
    assert await deliveries_of(server, hook_id) == 5


async def test_a_row_the_database_refuses_fails_only_its_own_request(
    server: RunningHub, clock: FakeClock
) -> None:
    """Written together in one transaction, then one at a time when that fails."""
    hook_id, _ = await add_hook(server)
    hook = await server.hub.hooks._repo.lookup_hook(server.hub.db, hook_id)
    assert hook is not None

    def delivery(body: str | None) -> HubDelivery:
        return HubDelivery(
            id=new_id(),
            team_id=hook.team_id,
            hook_id=hook.id,
            host_id=hook.host_id,
            routine_id=hook.routine_id,
            webhook_id="msg_" + new_id(),
            body=body,  # type: ignore[arg-type]  # None: refused by NOT NULL on both databases
            status=SKIPPED,
            received_at=clock.now(),
        )

    results = await asyncio.gather(
        *(server.hub.hooks._store(delivery(b)) for b in ["{}", "{}", None, "{}"]),
        return_exceptions=True,
    )
    assert [r if isinstance(r, bool) else "refused" for r in results] == [
        True,
        True,
        "refused",
        True,
    ]
    assert await deliveries_of(server, hook_id) == 3


async def test_unknown_and_disabled_hooks_are_404(server: RunningHub, clock: FakeClock) -> None:
    disabled, secret = await add_hook(server, enabled=False)
    for hook_id in (disabled, new_id(), "not-an-id"):
        status, answer, _ = await post(server, hook_id, BODY, signed(secret, BODY, clock))
        assert (status, answer["error"]["code"]) == (404, "hookNotFound")


class CountingCheck(SignatureCheck):
    """The real check, counting what each request computes."""

    def __init__(self) -> None:
        self.secrets_checked: list[int] = []

    def matches(self, candidates: Any, headers: Any, body: bytes, now: float) -> bool:
        self.secrets_checked.append(len(candidates))
        return super().matches(candidates, headers, body, now)


async def test_an_unknown_hook_costs_what_a_known_one_does(
    server: RunningHub, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not by the clock: the same lookup and the same two HMACs, known hook or not."""
    counting = CountingCheck()
    monkeypatch.setattr(server.hub.hooks, "_signatures", counting)
    lookups: list[str] = []
    repo = server.hub.hooks._repo
    real_lookup = repo.lookup_hook

    async def counted(db: Any, hook_id: str) -> Any:
        lookups.append(hook_id)
        return await real_lookup(db, hook_id)

    known, secret = await add_hook(server)
    disabled, _ = await add_hook(server, enabled=False)
    monkeypatch.setattr(repo, "lookup_hook", counted)
    for hook_id in (known, new_id(), disabled):
        await post(server, hook_id, BODY, signed(secret, BODY, clock))
    assert counting.secrets_checked == [2, 2, 2]
    assert len(lookups) == 3


async def test_a_flood_is_429_with_retry_after(server: RunningHub, clock: FakeClock) -> None:
    hook_id, secret = await add_hook(server)
    burst = server.hub.settings.hub.hook_burst
    for _ in range(burst):
        assert (await post(server, hook_id, BODY, signed(secret, BODY, clock)))[0] == 202
    status, answer, headers = await post(server, hook_id, BODY, signed(secret, BODY, clock))
    assert (status, answer["error"]["code"]) == (429, "rateLimited")
    assert int(headers["Retry-After"]) >= 1
    other, other_secret = await add_hook(server)  # another hook has its own budget
    assert (await post(server, other, BODY, signed(other_secret, BODY, clock)))[0] == 202
    clock.advance(server.hub.settings.hub.hook_refill_seconds)
    assert (await post(server, hook_id, BODY, signed(secret, BODY, clock)))[0] == 202


async def test_unsigned_posts_do_not_use_up_the_senders_rate(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, secret = await add_hook(server)
    forged = signed("whsec_" + "A" * 32, BODY, clock)
    for _ in range(server.hub.settings.hub.hook_burst):
        assert (await post(server, hook_id, BODY, forged))[0] == 401
    assert (await post(server, hook_id, BODY, forged))[0] == 429
    # Whoever knows the address has spent its own allowance, not the sender's.
    assert (await post(server, hook_id, BODY, signed(secret, BODY, clock)))[0] == 202


async def test_the_previous_secret_is_valid_for_a_day_after_a_rotation(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, old = await add_hook(server)
    rotated = await server.builtin.services.routine_hooks.rotate_hook(OWNER, hook_id)
    new = rotated.secret
    await hub_has(server, hook_id, new)
    for secret in (new, old):
        assert (await post(server, hook_id, BODY, signed(secret, BODY, clock)))[0] == 202
    clock.advance(24 * 3600 + 1)
    assert (await post(server, hook_id, BODY, signed(old, BODY, clock)))[0] == 401
    assert (await post(server, hook_id, BODY, signed(new, BODY, clock)))[0] == 202


@pytest.mark.parametrize(
    ("filters", "body", "passes"),
    [
        (HookFilters(event_types=["issue.opened"]), BODY, True),
        (HookFilters(event_types=["issue.closed", "push"]), BODY, False),
        (HookFilters.model_validate({"equals": [{"path": "data.n", "value": 3}]}), BODY, True),
        (HookFilters.model_validate({"equals": [{"path": "data.n", "value": "3"}]}), BODY, False),
        (
            HookFilters.model_validate({"equals": [{"path": "data.gone", "value": None}]}),
            BODY,
            False,
        ),
        (HookFilters(event_types=["issue.opened"]), b"not json", False),
    ],
)
async def test_filters_decide_whether_a_delivery_starts_a_run(
    server: RunningHub, clock: FakeClock, filters: HookFilters, body: bytes, passes: bool
) -> None:
    hook_id, secret = await add_hook(server, filters=filters)
    status, answer, _ = await post(server, hook_id, body, signed(secret, body, clock))
    assert status == 202
    assert answer["status"] == ("accepted" if passes else "skipped")
    async with server.hub.db.read() as conn:
        row = (
            await conn.execute(
                hub_hook_deliveries.select().where(hub_hook_deliveries.c.id == answer["id"])
            )
        ).one()
    if not passes:
        assert (row.status, row.body) == (SKIPPED, "")


async def test_a_body_nested_deeper_than_the_parser_goes_passes_no_filter(
    server: RunningHub, clock: FakeClock
) -> None:
    hook_id, secret = await add_hook(
        server, filters=HookFilters(equals=[FieldEquals(path="type", value="x")])
    )
    body = b"[" * 100_000 + b"]" * 100_000
    status, answer, _ = await post(server, hook_id, body, signed(secret, body, clock))
    assert (status, answer["status"]) == (202, "skipped")
