"""A remote host's enrolment with its hub: its identity key, what it remembers of its hub
between starts, and spending an enrolment code. Light on purpose: ``crewhost host`` enrols
(or says why it cannot) before it loads the host's modules."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from server.common.data_folder import FILE_MODE, private_folder
from server.common.errors import InvalidArgument, Unavailable
from server.common.keys import SigningKey
from server.config import Settings

log = logging.getLogger(__name__)


def identity_path(settings: Settings) -> Path:
    return settings.data_dir / "host" / "identity.key"


class HostState:
    """What a remote host remembers between starts: its id, its hub and the hub's key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, str] | None:
        if not self.path.exists():
            return None
        return dict(json.loads(self.path.read_text(encoding="utf-8")))

    def save(self, state: dict[str, str]) -> None:
        private_folder(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(state, indent=2))


@dataclass(frozen=True)
class Enrolment:
    """A host enrolled with a hub: its key, and its remembered state and where it is kept."""

    key: SigningKey
    state: dict[str, str]
    state_file: HostState


async def enrolled(settings: Settings, hub_url: str, enrol_code: str | None) -> Enrolment:
    """The host's enrolment with the hub at ``hub_url``: remembered, or made now with
    ``enrol_code``."""
    key = SigningKey.load_or_create(identity_path(settings))
    state_file = HostState(settings.data_dir / "host" / "link.json")
    state = state_file.load()
    if state is None or state.get("hub_url") != hub_url:
        if enrol_code is None:
            raise InvalidArgument("this host is not enrolled with that hub: pass --enrol CODE")
        state = {"hub_url": hub_url, "host_id": await enrol(hub_url, enrol_code, key)}
        state_file.save(state)
        log.info("enrolled", extra={"host_id": state["host_id"]})
    elif enrol_code is not None:
        log.info("already enrolled; the enrolment code is not needed")
    return Enrolment(key, state, state_file)


async def enrol(hub_url: str, code: str, key: SigningKey) -> str:
    """Spend an enrolment code; answers the new host id."""
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                f"{hub_url.rstrip('/')}/v1/hosts/enrol",
                json={"code": code, "publicKey": key.public_key},
                headers={"X-Crewhost-CSRF": "1"},
            ) as reply,
        ):
            body = await reply.json(content_type=None)
            status = reply.status
    except (aiohttp.ClientError, ValueError) as exc:
        raise Unavailable(f"cannot reach the hub at {hub_url}: {type(exc).__name__}") from exc
    if status != 201:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        raise Unavailable(f"enrolment refused: {error.get('message', status)}")
    return str(body["hostId"])
