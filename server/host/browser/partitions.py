"""Partitions: where a tab keeps its cookies and storage.

A partition is a value: its kind and key decide its folder, and nothing else
(a profile's display name never becomes a path), so a rename keeps the data.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from typing import Literal

from server.common.errors import InvalidArgument
from server.common.protocol.ids import PROFILE_ID_PATTERN, PROFILE_PREFIX

PartitionKind = Literal["shared", "agent", "profile", "private"]
KINDS: tuple[PartitionKind, ...] = ("shared", "agent", "profile", "private")

_AGENT_KEY = re.compile(r"[0-9a-f]{32}")
_PROFILE_ID = re.compile(PROFILE_ID_PATTERN)
_PRIVATE_KEY = re.compile(r"[0-9a-f]{32}")
_LABELS: dict[PartitionKind, str] = {
    "shared": "Shared",
    "agent": "Only this agent",
    "profile": "Profile",
    "private": "Private",
}


def agent_key(agent_id: str) -> str:
    """The partition key of an agent's own session: 32 hex characters of SHA-256 of its id."""
    return hashlib.sha256(agent_id.encode()).hexdigest()[:32]


def new_profile_id() -> str:
    """A new named profile id, ``profile-<32 hex>``."""
    return f"{PROFILE_PREFIX}{uuid.uuid4().hex}"


@dataclass(frozen=True)
class Partition:
    """One storage partition of a team. Build it with the class methods or ``parse``."""

    kind: PartitionKind
    key: str = ""

    def __post_init__(self) -> None:
        pattern = {
            "agent": _AGENT_KEY,
            "profile": _PROFILE_ID,
            "private": _PRIVATE_KEY,
        }.get(self.kind)
        if self.kind not in KINDS:
            raise InvalidArgument(
                f"unknown partition kind {self.kind!r}", code="browserPartitionInvalid"
            )
        if pattern is None and self.key:
            raise InvalidArgument(
                "the shared partition takes no key", code="browserPartitionInvalid"
            )
        if pattern is not None and not pattern.fullmatch(self.key):
            raise InvalidArgument(
                f"malformed {self.kind} partition key", code="browserPartitionInvalid"
            )

    @classmethod
    def shared(cls) -> Partition:
        return cls("shared")

    @classmethod
    def for_agent(cls, agent_id: str) -> Partition:
        """The "only this agent" partition of ``agent_id``."""
        return cls("agent", agent_key(agent_id))

    @classmethod
    def profile(cls, profile_id: str) -> Partition:
        return cls("profile", profile_id)

    @classmethod
    def private(cls) -> Partition:
        """A fresh in-memory partition; its popups share it, nothing else does."""
        return cls("private", uuid.uuid4().hex)

    @classmethod
    def parse(cls, kind: str, key: str = "") -> Partition:
        """A partition from saved or wire values; refuses unknown kinds and malformed keys."""
        for known in KINDS:
            if kind == known:
                return cls(known, key)
        raise InvalidArgument(f"unknown partition kind {kind!r}", code="browserPartitionInvalid")

    @property
    def persistent(self) -> bool:
        return self.kind != "private"

    @property
    def folder(self) -> str:
        """The folder name under the team's browser folder (private partitions have none)."""
        if self.kind == "shared":
            return "shared"
        if self.kind == "agent":
            return f"agent-{self.key}"
        if self.kind == "profile":
            return self.key
        raise InvalidArgument("a private partition has no folder", code="browserPartitionInvalid")

    @property
    def label(self) -> str:
        return _LABELS[self.kind]
