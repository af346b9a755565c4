"""What a team webhook is told: the event kinds and the bodies sent for them.

A body carries the run's or routine's name, its status, the person's description of what
waits and a link to the web client: never a secret, page contents or tool arguments.
``standard`` bodies follow Standard Webhooks' ``{type, timestamp, data}``; ``slack`` bodies
are ``{"text": …}``, which Slack's and Mattermost's incoming webhooks (and Discord's, at
their ``/slack`` address) take unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from server.host.agents.work_signals import AttentionWaiting, RunFinished

RUN_FINISHED = "run.finished"
RUN_FAILED = "run.failed"
APPROVAL_WAITING = "approval.waiting"
TEST = "webhook.test"
# What an endpoint may ask for; budgets add theirs here.
KINDS: tuple[str, ...] = (RUN_FINISHED, RUN_FAILED, APPROVAL_WAITING)
BODY_FORMATS: tuple[str, ...] = ("standard", "slack")

_WAITING_WORDS = {
    "consent": "an approval",
    "question": "an answer to a question",
    "secret": "a secret",
    "vaultItem": "a vault item",
}


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """One event for a team's endpoints: its kind, its data and its sentence."""

    kind: str
    data: dict[str, Any]
    text: str

    def body(self, body_format: str, at: float) -> str:
        """The JSON body in ``body_format``, as of ``at`` (seconds)."""
        if body_format == "slack":
            return json.dumps({"text": self.text}, ensure_ascii=False)
        stamp = datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")
        return json.dumps(
            {"type": self.kind, "timestamp": stamp, "data": self.data},
            ensure_ascii=False,
            separators=(",", ":"),
        )


def app_link(public_url: str | None) -> str:
    """The web client's address: the hub's public address when it is set."""
    return f"{(public_url or '').rstrip('/')}/app/"


def run_event(signal: RunFinished, link: str) -> WebhookEvent:
    """A routine's run ended: ``run.finished`` when done, ``run.failed`` otherwise."""
    kind = RUN_FINISHED if signal.status == "done" else RUN_FAILED
    data = {
        "teamId": signal.team_id,
        "agentId": signal.agent_id,
        "routineId": signal.routine_id,
        "routineName": signal.routine_name,
        "runId": signal.run_id,
        "threadId": signal.thread_id,
        "status": signal.status,
        "link": link,
    }
    if signal.status == "done":
        text = f"Routine “{signal.routine_name}” finished.{_open(link)}"
    else:
        text = f"Routine “{signal.routine_name}” did not finish ({signal.status}).{_open(link)}"
    return WebhookEvent(kind, data, text)


def waiting_event(signal: AttentionWaiting, agent_name: str, link: str) -> WebhookEvent:
    """An agent waits for a person: what it waits for, in the person's words."""
    data = {
        "teamId": signal.team_id,
        "agentId": signal.agent_id,
        "agentName": agent_name,
        "threadId": signal.thread_id,
        "requestId": signal.request_id,
        "waitingKind": signal.kind,
        "description": signal.description,
        "expiresAt": datetime.fromtimestamp(signal.expires_at, UTC)
        .isoformat()
        .replace("+00:00", "Z"),
        "routineId": signal.routine_id,
        "link": link,
    }
    wants = _WAITING_WORDS.get(signal.kind, "a person")
    text = f"{agent_name} waits for {wants}: {signal.description}{_open(link)}"
    return WebhookEvent(APPROVAL_WAITING, data, text)


def test_event(team_id: str, webhook_id: str, link: str) -> WebhookEvent:
    """The event of ``team-webhooks-v1/test``."""
    data = {"teamId": team_id, "webhookId": webhook_id, "link": link}
    text = f"A test event from Crewhost: this webhook works.{_open(link)}"
    return WebhookEvent(TEST, data, text)


def _open(link: str) -> str:
    """The link as a chat message ends with it: only a full address is worth a click (the
    hub's public address is not set on every host)."""
    return f" Open Crewhost: {link}" if link.startswith(("https://", "http://")) else ""
