"""``mail-server-v1``: the team's outgoing mail server, for email notifications. Owners
only; no answer ever carries the password."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from server.common.roles import Role
from server.common.wire import InboundModel, WireInt, WireModel
from server.host.agents.email_notices import (
    MAX_ADDRESS,
    MAX_HOST,
    MAX_PASSWORD,
    MailServerChoice,
    MailServerView,
)
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("mail-server-v1")

TlsMode = Literal["none", "starttls", "tls"]
Address = Annotated[str, StringConstraints(max_length=MAX_ADDRESS)]


class MailServerSettings(WireModel):
    host: str
    port: int
    tls_mode: TlsMode
    username: str | None
    password_set: bool
    from_address: str


class MailServerState(WireModel):
    server: MailServerSettings | None = Field(description="Null: no mail server is set.")


class SetMailServer(InboundModel):
    host: Annotated[str, StringConstraints(min_length=1, max_length=MAX_HOST)]
    port: Annotated[WireInt, Field(ge=1, le=65535)] = 587
    tls_mode: TlsMode = Field(
        "starttls",
        description="none: plain; starttls: upgraded on the submission port (587); "
        "tls: TLS from the first byte (465).",
    )
    username: Address | None = None
    password: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PASSWORD)] | None = None
    keep_password: bool = Field(False, description="Keep the password already set.")
    from_address: Address


class SendTestMail(InboundModel):
    to: Address


class MailSent(WireModel):
    sent: bool


def _state(view: MailServerView | None) -> MailServerState:
    if view is None:
        return MailServerState(server=None)
    return MailServerState(
        server=MailServerSettings(
            host=view.host,
            port=view.port,
            tls_mode=view.tls_mode,  # type: ignore[arg-type]
            username=view.username,
            password_set=view.password_set,
            from_address=view.from_address,
        )
    )


@routes.route("mail-server-v1/get", args=NoArgs, least_role=Role.OWNER)
async def get_mail_server(call: HostCall, _args: NoArgs) -> MailServerState:
    """The team's mail server and whether a password is set, never the password."""
    return _state(await call.host.mail.get_settings(call.peer.team_id))


@routes.route("mail-server-v1/set", args=SetMailServer, least_role=Role.OWNER)
async def set_mail_server(call: HostCall, args: SetMailServer) -> MailServerState:
    """Set the team's mail server (the password is sealed before it is stored)."""
    choice = MailServerChoice(
        args.host,
        args.port,
        args.tls_mode,
        args.username,
        args.password,
        args.keep_password,
        args.from_address,
    )
    return _state(await call.host.mail.set_settings(call.peer.team_id, choice))


@routes.route("mail-server-v1/delete", args=NoArgs, least_role=Role.OWNER)
async def delete_mail_server(call: HostCall, _args: NoArgs) -> MailServerState:
    """Forget the team's mail server: no email goes out."""
    await call.host.mail.remove_settings(call.peer.team_id)
    return MailServerState(server=None)


@routes.route("mail-server-v1/send_test", args=SendTestMail, least_role=Role.OWNER)
async def send_test_mail(call: HostCall, args: SendTestMail) -> MailSent:
    """Send a test mail over the team's server; a failure says what went wrong
    (mailNotSet, mailFailed)."""
    await call.host.notifications.send_test_mail(call.peer.team_id, args.to)
    return MailSent(sent=True)
