"""Sign-up, sign-in, sign-out, the signed-in account, its avatar and its sessions."""

from __future__ import annotations

from aiohttp import web

from server.common.errors import NotFound
from server.hub.http.routing import Call, RouteTable
from server.hub.routes.views import IMAGE_TYPES, account_view, avatar_response, session_view
from server.hub.schemas import (
    AccountView,
    RevokedCount,
    SessionList,
    SetupState,
    SignedIn,
    SignIn,
    SignUp,
    UpdateProfile,
)
from server.hub.services.accounts import MAX_AVATAR_BYTES, SignUpRequest
from server.hub.services.sessions import NewSession
from server.hub.storage.accounts import Account

routes = RouteTable()


def _signed_in(call: Call[SignUp] | Call[SignIn], account: Account, new: NewSession) -> SignedIn:
    """Browsers get the token as an HttpOnly cookie only; the peer library gets it in the body."""
    token = None
    if new.session.client == "browser":
        call.new_session_token = new.token
    else:
        token = new.token
    return SignedIn(
        account=account_view(account, has_avatar=False),
        session_id=new.session.id,
        token=token,
        expires_at=new.session.expires_at,
    )


@routes.get("/v1/setup", access="public", reply=SetupState)
async def get_setup_state(call: Call[None]) -> SetupState:
    """Whether the hub waits for its first owner, and whether anyone may sign up."""
    return SetupState(
        needs_setup=await call.hub.setup.needs_setup(),
        open_signup=call.hub.settings.hub.open_signup,
    )


@routes.post("/v1/accounts", access="public", body=SignUp, reply=SignedIn, status=201)
async def sign_up(call: Call[SignUp]) -> SignedIn:
    """Create an account (with the setup code, an invitation, or open sign-up) and sign in."""
    body = call.body
    account, new = await call.hub.accounts.sign_up(
        SignUpRequest(
            email=body.email,
            name=body.name,
            password=body.password,
            setup_code=body.setup_code,
            invitation_code=body.invitation_code,
            team_name=body.team_name,
            client=body.client,
            user_agent=call.user_agent,
            address=call.client_address,
        )
    )
    return _signed_in(call, account, new)


@routes.post("/v1/sessions", access="public", body=SignIn, reply=SignedIn, status=201)
async def sign_in(call: Call[SignIn]) -> SignedIn:
    """Sign in with email and password."""
    account, new = await call.hub.sessions.sign_in(
        call.body.email,
        call.body.password,
        client=call.body.client,
        user_agent=call.user_agent,
        address=call.client_address,
    )
    _, has_avatar = await call.hub.accounts.get_account(account.id)
    reply = _signed_in(call, account, new)
    return reply.model_copy(update={"account": account_view(account, has_avatar)})


@routes.delete("/v1/sessions/current", access="account")
async def sign_out(call: Call[None]) -> None:
    """Sign out: end this session."""
    await call.hub.sessions.sign_out(call.principal)
    call.clear_session = True


@routes.get("/v1/me", access="account", reply=AccountView)
async def get_me(call: Call[None]) -> AccountView:
    """The signed-in account."""
    account, has_avatar = await call.hub.accounts.get_account(call.principal.account_id)
    return account_view(account, has_avatar)


@routes.patch("/v1/me/profile", access="account", body=UpdateProfile, reply=AccountView)
async def update_profile(call: Call[UpdateProfile]) -> AccountView:
    """Change the display name."""
    account, has_avatar = await call.hub.accounts.update_name(
        call.principal.account_id, call.body.name
    )
    return account_view(account, has_avatar)


@routes.get("/v1/events", access="account", reply_content_types=("text/event-stream",))
async def account_events(call: Call[None]) -> web.StreamResponse:
    """Server-sent events of this account's access: ``access`` with a ``code``
    (``membershipsChanged``, ``roleChanged``, ``removedFromTeam``, ``sessionEnded``) and the
    team it concerns; the page reloads what it shows. The stream ends with its session."""
    principal = call.principal
    return await call.hub.streams.serve(call.request, principal.account_id, principal.token_hash)


@routes.get("/v1/me/avatar", access="account", reply_content_types=IMAGE_TYPES)
async def get_avatar(call: Call[None]) -> web.Response:
    """The avatar image, with the type its bytes show."""
    return avatar_response(await call.hub.accounts.get_avatar(call.principal.account_id))


@routes.put(
    "/v1/me/avatar",
    access="account",
    raw_body_types=IMAGE_TYPES,
    raw_body_limit=MAX_AVATAR_BYTES,
)
async def put_avatar(call: Call[None]) -> None:
    """Upload an avatar: a PNG, JPEG or WebP image of at most 1 MiB."""
    await call.hub.accounts.set_avatar(call.principal.account_id, call.raw_body)


@routes.delete("/v1/me/avatar", access="account")
async def delete_avatar(call: Call[None]) -> None:
    """Remove the avatar."""
    await call.hub.accounts.remove_avatar(call.principal.account_id)


@routes.get("/v1/me/sessions", access="account", reply=SessionList)
async def list_sessions(call: Call[None]) -> SessionList:
    """The account's signed-in sessions, the current one marked."""
    sessions = await call.hub.sessions.list_sessions(call.principal.account_id)
    return SessionList(sessions=[session_view(s, call.principal.session_id) for s in sessions])


@routes.delete("/v1/me/sessions/{session_id}", access="account")
async def revoke_session(call: Call[None]) -> None:
    """Sign one session out."""
    session_id = call.path_id("session_id")
    if not await call.hub.sessions.revoke_session(call.principal.account_id, session_id):
        raise NotFound("no such session")
    if session_id == call.principal.session_id:
        call.clear_session = True


@routes.post("/v1/me/sessions/revoke-others", access="account", reply=RevokedCount)
async def revoke_other_sessions(call: Call[None]) -> RevokedCount:
    """Sign out every session of this account but the current one."""
    return RevokedCount(revoked=await call.hub.sessions.revoke_other_sessions(call.principal))
