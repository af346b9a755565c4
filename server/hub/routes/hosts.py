"""Hosts: the team's list, enrolment of remote hosts, tickets and signaling."""

from __future__ import annotations

from server.common.protocol.signaling import (
    ConnectAnswer,
    ConnectRequest,
    RtcConfig,
    TicketGrant,
    TicketRequest,
)
from server.common.roles import Role
from server.common.turn import ice_servers_for
from server.hub.http.routing import Call, RouteTable
from server.hub.routes.views import host_view
from server.hub.schemas import (
    CreateEnrolment,
    EnrolHost,
    EnrolmentCreated,
    HostEnrolled,
    HostList,
)
from server.hub.services.hosts import ENROLMENT_ROLE

routes = RouteTable()


@routes.get("/v1/teams/{team_id}/hosts", access=Role.MEMBER, reply=HostList)
async def list_hosts(call: Call[None]) -> HostList:
    """The hosts of a team, the built-in one included."""
    hosts = await call.hub.hosts.list_hosts(call.team.team_id)
    return HostList(hosts=[host_view(h, online=call.hub.hosts.is_online(h)) for h in hosts])


@routes.post(
    "/v1/teams/{team_id}/hosts/enrolments",
    access=ENROLMENT_ROLE,
    body=CreateEnrolment,
    reply=EnrolmentCreated,
    status=201,
)
async def create_enrolment(call: Call[CreateEnrolment]) -> EnrolmentCreated:
    """A one-time code with which a new host machine joins the team."""
    new = await call.hub.hosts.create_enrolment(
        call.team.team_id, call.principal.account_id, call.body.name
    )
    return EnrolmentCreated(
        code=new.code,
        expires_at=new.expires_at,
        command=f"crewhost host --hub {call.origin} --enrol {new.code}",
    )


@routes.post("/v1/hosts/enrol", access="public", body=EnrolHost, reply=HostEnrolled, status=201)
async def enrol_host(call: Call[EnrolHost]) -> HostEnrolled:
    """A host spends its enrolment code and registers its identity key."""
    host = await call.hub.hosts.enrol(call.body.code, call.body.public_key)
    return HostEnrolled(host_id=host.id, name=host.name)


@routes.delete("/v1/teams/{team_id}/hosts/{host_id}", access=Role.OWNER)
async def remove_host(call: Call[None]) -> None:
    """Remove an enrolled host; its live peers are disconnected."""
    await call.hub.hosts.remove_host(call.team.team_id, call.path_id("host_id"))


@routes.get("/v1/rtc", access="account", reply=RtcConfig)
async def rtc_config(call: Call[None]) -> RtcConfig:
    """The STUN/TURN servers a peer connection to a host should use, with a TURN
    credential of this account's own when the hub holds the TURN secret."""
    rtc = call.hub.settings.rtc
    return RtcConfig(
        ice_servers=ice_servers_for(rtc, call.principal.account_id, call.hub.clock.now())
    )


@routes.post(
    "/v1/teams/{team_id}/hosts/{host_id}/tickets",
    access=Role.MEMBER,
    body=TicketRequest,
    reply=TicketGrant,
    status=201,
)
async def issue_ticket(call: Call[TicketRequest]) -> TicketGrant:
    """A short-lived ticket to connect to one host, bound to this peer's DTLS fingerprint."""
    host = await call.hub.hosts.get_team_host(call.team.team_id, call.path_id("host_id"))
    call.hub.links.require_reachable(host)
    ticket, claims = await call.hub.tickets.issue(
        call.principal,
        call.team.team_id,
        call.team.role,
        host.id,
        call.body.fingerprint,
        as_of=call.team.as_of,
    )
    return TicketGrant(ticket=ticket, expires_at=claims.expires_at, host_key=host.public_key)


@routes.post(
    "/v1/teams/{team_id}/hosts/{host_id}/connect",
    access=Role.MEMBER,
    body=ConnectRequest,
    reply=ConnectAnswer,
)
async def connect_to_host(call: Call[ConnectRequest]) -> ConnectAnswer:
    """Relay an SDP offer (with its ticket) to the host and return the host's signed answer."""
    host = await call.hub.hosts.get_team_host(call.team.team_id, call.path_id("host_id"))
    await call.hub.tickets.check_relay(
        call.principal, call.team.team_id, call.team.role, host.id, call.body.ticket
    )
    call.hub.links.require_reachable(host)
    answer = await call.hub.links.relay_offer_to(host, call.body.ticket, call.body.sdp)
    return ConnectAnswer(sdp=answer.sdp, signature=answer.signature, host_key=host.public_key)
