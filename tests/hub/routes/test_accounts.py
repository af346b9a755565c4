"""Sign-up, sign-in, the profile, avatars and sessions, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.clock import FakeClock
from tests.support.databases import ScratchDatabase
from tests.support.hub_server import PASSWORD, RunningHub, hub_settings, running_hub
from tests.support.images import tiny_png


async def test_setup_code_makes_the_first_owner_once(server: RunningHub) -> None:
    setup = await server.client().get("/v1/setup")
    assert setup.body == {"needsSetup": True, "openSignup": False}
    code = await server.hub.setup.issue_code()
    body = {"email": "Ada@Example.com", "name": "Ada", "password": PASSWORD, "setupCode": code}
    first = await server.client().post("/v1/accounts", {**body, "teamName": "Analytical"})
    assert first.status == 201
    assert first.body["account"]["email"] == "ada@example.com"
    assert first.body["token"] is None  # browsers get a cookie, never the token

    again = await server.client().post("/v1/accounts", {**body, "email": "eve@example.com"})
    assert (again.status, again.code) == (403, "setupCodeInvalid")
    assert await server.hub.setup.issue_code() is None
    assert (await server.client().get("/v1/setup")).body["needsSetup"] is False


async def test_the_setup_owner_owns_the_first_team(server: RunningHub) -> None:
    owner = await server.sign_up_owner(team="Analytical")
    teams = await owner.get("/v1/teams")
    assert [(t["name"], t["role"]) for t in teams.body["teams"]] == [("Analytical", "owner")]


async def test_sign_up_without_invitation_is_closed_by_default(server: RunningHub) -> None:
    await server.sign_up_owner()
    reply = await server.client().post(
        "/v1/accounts", {"email": "x@example.com", "name": "X", "password": PASSWORD}
    )
    assert (reply.status, reply.code) == (403, "signupClosed")


async def test_an_email_signs_up_once(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    created = await owner.post(f"/v1/teams/{team_id}/invitations", {"maxUses": 2})
    body = {
        "email": "owner@example.com",
        "name": "Twin",
        "password": PASSWORD,
        "invitationCode": created.body["code"],
    }
    reply = await server.client().post("/v1/accounts", body)
    assert (reply.status, reply.code) == (409, "emailTaken")
    # The refused sign-up did not spend a use of the invitation.
    listed = await owner.get(f"/v1/teams/{team_id}/invitations")
    assert listed.body["invitations"][0]["uses"] == 0


async def test_a_wrong_invitation_code_tells_nothing_about_the_email(server: RunningHub) -> None:
    await server.sign_up_owner()
    client = server.client()
    known, unknown = [
        await client.post(
            "/v1/accounts",
            {"email": email, "name": "X", "password": PASSWORD, "invitationCode": "junk"},
        )
        for email in ("owner@example.com", "nobody@example.com")
    ]
    assert (known.status, known.code) == (404, "invitationInvalid")
    assert known.body == unknown.body


async def test_sign_up_is_limited_per_client_address(server: RunningHub, clock: FakeClock) -> None:
    owner = await server.create_owner("owner@example.com", "Team A")
    team_id = await server.first_team_id(owner)
    code = (await owner.post(f"/v1/teams/{team_id}/invitations", {})).body["code"]
    security = server.hub.settings.security
    client = server.client()
    statuses = [
        (
            await client.post(
                "/v1/accounts",
                {"email": f"u{n}@example.com", "name": "U", "password": PASSWORD}
                | {"invitationCode": "junk"},
            )
        ).status
        for n in range(security.signin_per_address_burst)
    ]
    assert statuses == [404] * security.signin_per_address_burst
    good = {"email": "new@example.com", "name": "New", "password": PASSWORD}
    good |= {"invitationCode": code}
    limited = await client.post("/v1/accounts", good)
    assert (limited.status, limited.code) == (429, "rateLimited")
    assert int(limited.headers["Retry-After"]) >= 1
    # Sign-in keeps a budget of its own.
    assert (await server.sign_in("owner@example.com")).account_id == owner.account_id

    clock.advance(security.signin_per_address_refill_seconds)
    joined = await client.post("/v1/accounts", good)
    assert (joined.status, joined.body["account"]["email"]) == (201, "new@example.com")


async def test_sign_in_gives_a_cookie_to_browsers_and_a_token_to_peers(server: RunningHub) -> None:
    await server.sign_up_owner()
    browser = server.client()
    reply = await browser.post("/v1/sessions", {"email": "owner@example.com", "password": PASSWORD})
    assert reply.status == 201
    assert reply.body["token"] is None
    cookie = reply.headers["Set-Cookie"]
    assert cookie.startswith("crewhost_session=")
    assert "HttpOnly" in cookie
    assert "SameSite=Lax" in cookie
    assert "Path=/" in cookie
    assert "Secure" not in cookie  # plain HTTP on loopback
    assert (await browser.get("/v1/me")).body["email"] == "owner@example.com"

    peer = await server.sign_in("owner@example.com", client_kind="peer")
    assert peer.bearer is not None
    assert len(peer.bearer) >= 43  # 256 bits, URL-safe
    me = await peer.get("/v1/me")
    assert (me.status, me.body["name"]) == (200, "Owner")


async def raw_post(server: RunningHub, path: str, body: dict[str, Any], headers: bytes) -> bytes:
    """A POST written byte by byte, with headers no HTTP client library would send."""
    parts = urlsplit(server.url)
    assert parts.hostname is not None
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps(body).encode()
    writer.write(
        b"POST " + path.encode() + b" HTTP/1.1\r\nHost: " + parts.netloc.encode() + b"\r\n"
        b"Content-Type: application/json\r\nX-Crewhost-CSRF: 1\r\n"
        + headers
        + b"Content-Length: "
        + str(len(data)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + data
    )
    await writer.drain()
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer


async def test_a_client_name_that_is_not_utf8_is_kept_readable(server: RunningHub) -> None:
    await server.sign_up_owner()
    answer = await raw_post(
        server,
        "/v1/sessions",
        {"email": "owner@example.com", "password": PASSWORD, "client": "peer"},
        b"User-Agent: Probe/1.0 \xff\xfe(lab)\r\n",
    )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"201", answer[:300]
    token = json.loads(body)["token"]
    peer = server.client()
    peer.bearer = token
    listed = await peer.get("/v1/me/sessions")
    current = next(s for s in listed.body["sessions"] if s["current"])
    assert current["userAgent"] == "Probe/1.0 ??(lab)"


@pytest.mark.parametrize("route", ["/v1/sessions", "/v1/accounts"])
@pytest.mark.parametrize(
    "email",
    [
        "own\u0000er@example.com",
        # 254 characters as sent, 264 once lowercased ("İ" lowercases to two)
        "\u0130" * 10 + "a" * 239 + "@a.bc",
    ],
)
async def test_an_email_with_a_control_character_or_too_long_is_refused(
    server: RunningHub, route: str, email: str
) -> None:
    owner = await server.sign_up_owner()
    code = await owner.post(f"/v1/teams/{await server.first_team_id(owner)}/invitations", {})
    reply = await server.client().post(
        route,
        {
            "email": email,
            "name": "New",
            "password": PASSWORD,
            "invitationCode": code.body["code"],
        }
        if route == "/v1/accounts"
        else {"email": email, "password": PASSWORD},
    )
    assert (reply.status, reply.body["error"]["code"]) == (400, "invalidArgument")


async def test_wrong_password_and_unknown_email_get_the_same_answer(server: RunningHub) -> None:
    await server.sign_up_owner()
    client = server.client()
    wrong = await client.post(
        "/v1/sessions", {"email": "owner@example.com", "password": "nope-nope-nope"}
    )
    unknown = await client.post(
        "/v1/sessions", {"email": "nobody@example.com", "password": "nope-nope-nope"}
    )
    assert wrong.status == unknown.status == 401
    assert wrong.body == unknown.body
    assert "Set-Cookie" not in wrong.headers


async def test_profile_name_changes(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    reply = await owner.patch("/v1/me/profile", {"name": "  Ada Lovelace "})
    assert (reply.status, reply.body["name"]) == (200, "Ada Lovelace")
    assert (await owner.get("/v1/me")).body["name"] == "Ada Lovelace"


async def test_avatar_is_kept_by_its_magic_bytes_and_served_safely(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    png = tiny_png()
    put = await owner.put("/v1/me/avatar", data=png, headers={"Content-Type": "image/png"})
    assert put.status == 204
    got = await owner.get("/v1/me/avatar")
    assert got.status == 200
    assert got.raw == png
    assert got.headers["Content-Type"] == "image/png"
    assert got.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in got.headers["Content-Security-Policy"]
    assert (await owner.get("/v1/me")).body["hasAvatar"] is True

    # A JPEG declared as PNG is stored and served as what its bytes are.
    jpeg = b"\xff\xd8\xff\xe0" + b"\x00" * 64
    await owner.put("/v1/me/avatar", data=jpeg, headers={"Content-Type": "image/png"})
    assert (await owner.get("/v1/me/avatar")).headers["Content-Type"] == "image/jpeg"

    assert (await owner.delete("/v1/me/avatar")).status == 204
    missing = await owner.get("/v1/me/avatar")
    assert (missing.status, missing.code) == (404, "avatarNotFound")


@pytest.mark.parametrize(
    ("data", "content_type", "status", "code"),
    [
        (b"GIF89a" + b"\x00" * 32, "image/png", 400, "notAnImage"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/webp", 400, "notAnImage"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * (1024 * 1024), "image/png", 413, "payloadTooLarge"),
        (tiny_png(), "text/html", 415, "unsupportedMediaType"),
    ],
)
async def test_avatar_refusals_keep_the_old_avatar(
    server: RunningHub, data: bytes, content_type: str, status: int, code: str
) -> None:
    owner = await server.sign_up_owner()
    png = tiny_png()
    await owner.put("/v1/me/avatar", data=png, headers={"Content-Type": "image/png"})
    reply = await owner.put("/v1/me/avatar", data=data, headers={"Content-Type": content_type})
    assert (reply.status, reply.code) == (status, code)
    assert (await owner.get("/v1/me/avatar")).raw == png


async def test_sessions_list_and_revocation_take_effect_on_the_next_request(
    server: RunningHub,
) -> None:
    first = await server.sign_up_owner()
    second = await server.sign_in("owner@example.com")
    third = await server.sign_in("owner@example.com", client_kind="peer")

    listed = await second.get("/v1/me/sessions")
    assert len(listed.body["sessions"]) == 3
    current = [s for s in listed.body["sessions"] if s["current"]]
    assert len(current) == 1

    first_session = next(
        s["id"] for s in listed.body["sessions"] if not s["current"] and s["client"] == "browser"
    )
    assert (await second.delete(f"/v1/me/sessions/{first_session}")).status == 204
    assert (await first.get("/v1/me")).status == 401
    assert (await second.get("/v1/me")).status == 200

    others = await second.post("/v1/me/sessions/revoke-others")
    assert (others.status, others.body) == (200, {"revoked": 1})
    assert (await third.get("/v1/me")).status == 401
    assert (await second.get("/v1/me")).status == 200


async def test_an_account_cannot_revoke_someone_elses_session(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    other = await server.create_owner("b@example.com", "Team B")
    theirs = (await other.get("/v1/me/sessions")).body["sessions"][0]["id"]
    reply = await owner.delete(f"/v1/me/sessions/{theirs}")
    assert (reply.status, reply.code) == (404, "notFound")
    assert (await other.get("/v1/me")).status == 200


async def test_sign_out_ends_the_session_and_clears_the_cookie(server: RunningHub) -> None:
    owner = await server.sign_up_owner()
    peer = await server.sign_in("owner@example.com", client_kind="peer")
    reply = await owner.delete("/v1/sessions/current")
    assert reply.status == 204
    assert 'crewhost_session=""' in reply.headers["Set-Cookie"]
    assert (await owner.get("/v1/me")).status == 401
    assert (await peer.delete("/v1/sessions/current")).status == 204
    assert (await peer.get("/v1/me")).status == 401


async def test_sign_in_is_rate_limited_without_locking_out_the_owner(server: RunningHub) -> None:
    await server.sign_up_owner()
    burst = server.hub.settings.security.signin_failures_per_account_burst
    attacker = server.client()
    for _ in range(burst):
        reply = await attacker.post(
            "/v1/sessions", {"email": "owner@example.com", "password": "guess-guess-guess"}
        )
        assert reply.status == 401
    blocked = await attacker.post(
        "/v1/sessions", {"email": "owner@example.com", "password": PASSWORD}
    )
    assert (blocked.status, blocked.code) == (429, "rateLimited")
    assert int(blocked.headers["Retry-After"]) >= 1


async def test_sign_in_limit_lifts_after_a_short_wait(server: RunningHub, clock: FakeClock) -> None:
    await server.sign_up_owner()
    security = server.hub.settings.security
    attacker = server.client()
    for _ in range(security.signin_failures_per_account_burst + 1):
        await attacker.post("/v1/sessions", {"email": "owner@example.com", "password": "x" * 12})
    clock.advance(security.signin_failures_per_account_refill_seconds)
    reply = await server.client().post(
        "/v1/sessions", {"email": "owner@example.com", "password": PASSWORD}
    )
    assert reply.status == 201


async def test_sign_in_is_limited_per_client_address(server: RunningHub) -> None:
    await server.sign_up_owner()
    client = server.client()
    burst = server.hub.settings.security.signin_per_address_burst
    statuses = [
        (
            await client.post("/v1/sessions", {"email": f"u{n}@example.com", "password": "x" * 12})
        ).status
        for n in range(burst + 1)
    ]
    assert statuses[:burst] == [401] * burst
    assert statuses[burst] == 429


async def test_an_idle_session_expires(server: RunningHub, clock: FakeClock) -> None:
    owner = await server.sign_up_owner()
    idle = server.hub.settings.security.session_idle_seconds
    clock.advance(idle - 120)
    assert (await owner.get("/v1/me")).status == 200  # use refreshes the idle timer
    clock.advance(idle - 120)
    assert (await owner.get("/v1/me")).status == 200
    clock.advance(idle + 1)
    reply = await owner.get("/v1/me")
    assert (reply.status, reply.code) == (401, "sessionExpired")


async def test_a_used_session_still_ends_at_its_absolute_limit(
    server: RunningHub, clock: FakeClock
) -> None:
    owner = await server.sign_up_owner()
    security = server.hub.settings.security
    step = min(security.session_idle_seconds, security.session_max_seconds) / 2
    elapsed = 0.0
    while elapsed + step < security.session_max_seconds:
        clock.advance(step)
        elapsed += step
        assert (await owner.get("/v1/me")).status == 200
    clock.advance(security.session_max_seconds - elapsed + 1)
    assert (await owner.get("/v1/me")).status == 401


async def test_open_sign_up_when_the_operator_allows_it(
    tmp_path: Path, database: ScratchDatabase
) -> None:
    settings = hub_settings(tmp_path, database, **{"hub.open_signup": True})
    async with running_hub(settings, database) as server:
        await server.sign_up_owner()
        client = server.client()
        assert (await client.get("/v1/setup")).body["openSignup"] is True
        reply = await client.post(
            "/v1/accounts", {"email": "walk-in@example.com", "name": "W", "password": PASSWORD}
        )
        assert reply.status == 201
        assert (await client.get("/v1/teams")).body == {"teams": []}
        made = await client.post("/v1/teams", {"name": "Walk-in team"})
        assert (made.status, made.body["role"]) == (201, "owner")


async def test_an_email_is_one_address_however_its_accents_are_typed(server: RunningHub) -> None:
    composed = unicodedata.normalize("NFC", "José@Example.com")
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    owner = await server.sign_up_owner()
    team_id = await server.first_team_id(owner)
    await server.invite(owner, team_id, composed, "member")

    signed_in = await server.client().post(
        "/v1/sessions", {"email": decomposed, "password": PASSWORD}
    )
    assert signed_in.status == 201, signed_in.body
    code = (await owner.post(f"/v1/teams/{team_id}/invitations", {"role": "member"})).body["code"]
    beside = await server.client().post(
        "/v1/accounts",
        {"email": decomposed, "name": "Other", "password": PASSWORD, "invitationCode": code},
    )
    assert (beside.status, beside.code) == (409, "emailTaken")
    members = await owner.get(f"/v1/teams/{team_id}/members")
    assert [m["email"] for m in members.body["members"]] == [
        "owner@example.com",
        unicodedata.normalize("NFC", "josé@example.com"),
    ]
