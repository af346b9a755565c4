"""Bodies of the hub's HTTP API: what clients send and what the hub answers."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from server.common.protocol.ids import HostId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


def _email(value: str) -> str:
    """The one spelling an address is stored and looked up by: NFC, lowercased."""
    # Composed first so that "é" typed as e + U+0301 and as U+00E9 are one address;
    # composed again because lowercasing can leave a decomposed sequence behind.
    value = unicodedata.normalize("NFC", unicodedata.normalize("NFC", value.strip()).lower())
    value = _no_control_characters(value)
    if not _EMAIL.match(value):
        raise ValueError("not an email address")
    if len(value) > MAX_EMAIL_CHARS:  # lowercasing can lengthen it ("İ" is two letters)
        raise ValueError(f"an email address has at most {MAX_EMAIL_CHARS} characters")
    return value


def _no_control_characters(value: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("control characters are not allowed")
    return value


MAX_EMAIL_CHARS = 254
Email = Annotated[str, StringConstraints(max_length=MAX_EMAIL_CHARS), AfterValidator(_email)]
Password = Annotated[str, StringConstraints(min_length=10, max_length=1024)]
PersonName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    AfterValidator(_no_control_characters),
]
TeamName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=60),
    AfterValidator(_no_control_characters),
]
Code = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ClientKind = Literal["browser", "peer"]


# --- accounts and sessions ---------------------------------------------------------


class SignUp(InboundModel):
    email: Email
    name: PersonName
    password: Password
    setup_code: Code | None = Field(None, description="The one-time code printed at first start.")
    invitation_code: Code | None = Field(None, description="A code from a team invitation.")
    team_name: TeamName = Field("My team", description="Name of the first team (setup only).")
    client: ClientKind = Field(
        "browser", description="browser: a session cookie; peer: a bearer token in the answer."
    )


class SignIn(InboundModel):
    email: Email
    password: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    client: ClientKind = "browser"


class AccountView(WireModel):
    id: str
    email: str
    name: str
    has_avatar: bool
    created_at: float


class SignedIn(WireModel):
    account: AccountView
    session_id: str
    token: str | None = Field(None, description="Bearer token; only for client 'peer'.")
    expires_at: float


class UpdateProfile(InboundModel):
    name: PersonName


class SessionView(WireModel):
    id: str
    client: ClientKind
    user_agent: str
    created_at: float
    last_seen_at: float
    expires_at: float
    current: bool


class SessionList(WireModel):
    sessions: list[SessionView]


class RevokedCount(WireModel):
    revoked: int


class SetupState(WireModel):
    needs_setup: bool
    open_signup: bool


# --- teams and members -------------------------------------------------------------


class CreateTeam(InboundModel):
    name: TeamName


class RenameTeam(InboundModel):
    name: TeamName


class TeamView(WireModel):
    id: str
    name: str
    role: Role
    created_at: float


class TeamList(WireModel):
    teams: list[TeamView]


class MemberView(WireModel):
    account_id: str
    email: str
    name: str
    role: Role
    joined_at: float
    has_avatar: bool = Field(
        description="Whether GET /v1/teams/{team_id}/members/{account_id}/avatar has an image."
    )


class MemberList(WireModel):
    members: list[MemberView]


class ChangeRole(InboundModel):
    role: Role


# --- invitations -------------------------------------------------------------------


class CreateInvitation(InboundModel):
    role: Role = Role.MEMBER
    expires_in_seconds: int = Field(7 * 86400, ge=60, le=90 * 86400)
    max_uses: int = Field(1, ge=1, le=1000)


class InvitationUseView(WireModel):
    account_id: str
    name: str
    used_at: float


class InvitationView(WireModel):
    id: str
    role: Role
    created_by: str | None
    created_at: float
    expires_at: float
    max_uses: int
    uses: int
    revoked: bool
    usable: bool
    used_by: list[InvitationUseView] = Field(
        default_factory=list, description="Who joined with it and when, oldest first."
    )


class InvitationCreated(WireModel):
    invitation: InvitationView
    code: str = Field(description="Shown once; share it or the link.")
    link: str


class InvitationList(WireModel):
    invitations: list[InvitationView]


class InvitationPreview(WireModel):
    team_name: str
    role: Role
    expires_at: float


class AcceptInvitation(InboundModel):
    code: Code


# --- hosts and health --------------------------------------------------------------


class HostView(WireModel):
    id: str
    name: str
    builtin: bool
    online: bool
    public_key: str = Field(description="The host's Ed25519 identity key (pin it).")


HostName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=60),
    AfterValidator(_no_control_characters),
]


class CreateEnrolment(InboundModel):
    name: HostName


class EnrolmentCreated(WireModel):
    code: str = Field(description="Shown once; give it to `crewhost host --enrol`.")
    expires_at: float
    command: str


class EnrolHost(InboundModel):
    code: Code
    public_key: Annotated[str, StringConstraints(min_length=40, max_length=64)]


class HostEnrolled(WireModel):
    host_id: str
    name: str


class HostList(WireModel):
    hosts: list[HostView]


# --- personal access tokens ---------------------------------------------------------

TokenName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=100),
    AfterValidator(_no_control_characters),
]


class CreateAccessToken(InboundModel):
    name: TokenName = Field(description="What the token is for, in the member's words.")
    host_id: HostId = Field(description="The one host of the team it reaches.")
    scope: Literal["browser", "browser+agents"] = Field(
        "browser", description="browser: the browser tools; browser+agents: also ask_agent."
    )
    expires_in_days: int = Field(30, ge=1, le=365)


class AccessTokenView(WireModel):
    id: str
    name: str
    host_id: str
    account_id: str
    scope: str
    created_at: float
    expires_at: float
    last_used_at: float | None
    revoked: bool
    live: bool = Field(description="Neither revoked nor expired.")


class AccessTokenCreated(WireModel):
    token: AccessTokenView
    secret: str = Field(description="Shown once: the bearer for the MCP endpoint (crh_pat_...).")


class AccessTokenList(WireModel):
    tokens: list[AccessTokenView]


class AccessTokenUseView(WireModel):
    id: str
    token_id: str
    account_id: str
    at: float
    tool: str
    outcome: str = Field(description="ok, error (the tool answered an error) or refused.")


class AccessTokenUseList(WireModel):
    uses: list[AccessTokenUseView]


class Health(WireModel):
    status: Literal["ok"]
    version: str


class ErrorBody(WireModel):
    code: str
    message: str
    field: str | None = None


class ErrorReply(WireModel):
    error: ErrorBody
