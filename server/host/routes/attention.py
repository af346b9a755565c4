"""``attention-v1``: what agents wait for a person to answer, and the answers."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from server.common.errors import NotFound
from server.common.protocol.events import SecretRequestDetails, VaultItemRequestDetails
from server.common.protocol.ids import RequestId
from server.common.roles import Role
from server.common.wire import InboundModel, WireModel
from server.host.agents.attention import MAX_ANSWER_CHARS, AttentionRequest
from server.host.container import HostCall
from server.host.routes.system import NoArgs
from server.host.rtc.team_api import HostRouteTable

routes = HostRouteTable("attention-v1")

Hash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class AttentionView(WireModel):
    id: str
    kind: str
    thread_id: str
    agent_id: str
    call_id: str
    tool: str
    summary: str
    arguments_hash: str
    expires_at: float
    question: str | None
    options: list[str] | None
    multiple: bool
    # What a request for a secret or a vault item shows: public facts only.
    secret: SecretRequestDetails | None = None
    vault_item: VaultItemRequestDetails | None = None
    # For consent: what the call will do, in one line from the host.
    description: str | None = None


class AttentionList(WireModel):
    requests: list[AttentionView]


class AnswerAttention(InboundModel):
    id: RequestId
    approve: bool
    arguments_hash: Hash | None = None


class AttentionAnswered(WireModel):
    id: str
    approved: bool


AnswerText = Annotated[str, StringConstraints(max_length=MAX_ANSWER_CHARS)]


class ReplyToQuestion(InboundModel):
    id: RequestId
    answer: AnswerText | Annotated[list[AnswerText], Field(max_length=50)] = Field(
        description="Words, one of the options, or for a multiple choice a list of them."
    )


class QuestionAnswered(WireModel):
    id: str
    answer: str | list[str]


def _view(request: AttentionRequest) -> AttentionView:
    return AttentionView(
        id=request.id,
        kind=request.kind,
        thread_id=request.thread_id,
        agent_id=request.agent_id,
        call_id=request.call_id,
        tool=request.tool,
        summary=request.summary,
        arguments_hash=request.arguments_hash,
        expires_at=request.expires_at,
        question=request.question,
        options=request.options,
        multiple=request.multiple,
        secret=request.secret,
        vault_item=request.vault_item,
        description=request.description,
    )


@routes.route("attention-v1/list", args=NoArgs, least_role=Role.MEMBER)
async def list_requests(call: HostCall, _args: NoArgs) -> AttentionList:
    """The requests this member may answer: those of threads they see."""
    requests = call.host.attention.list_requests(call.peer.team_id, call.peer.account_id)
    return AttentionList(requests=[_view(r) for r in requests])


@routes.route("attention-v1/answer", args=AnswerAttention, least_role=Role.MEMBER)
async def answer_request(call: HostCall, args: AnswerAttention) -> AttentionAnswered:
    """Approve or deny once; with ``argumentsHash``, only the call that was shown."""
    attention, peer = call.host.attention, call.peer
    try:
        request = attention.answer(
            peer.team_id,
            peer.account_id,
            args.id,
            approve=args.approve,
            arguments_hash=args.arguments_hash,
        )
    except NotFound:
        # Not waiting here: the stored request says how it ended, to who could answer it.
        raise await attention.gone(peer.team_id, peer.account_id, args.id) from None
    return AttentionAnswered(id=request.id, approved=args.approve)


@routes.route("attention-v1/reply", args=ReplyToQuestion, least_role=Role.MEMBER)
async def reply(call: HostCall, args: ReplyToQuestion) -> QuestionAnswered:
    """Answer an agent's question once (``kind: "question"``)."""
    attention, peer = call.host.attention, call.peer
    try:
        answer = attention.reply(peer.team_id, peer.account_id, args.id, args.answer)
    except NotFound:
        # Not waiting here: the stored request says how it ended, to who could answer it.
        raise await attention.gone(peer.team_id, peer.account_id, args.id) from None
    return QuestionAnswered(id=args.id, answer=answer)
