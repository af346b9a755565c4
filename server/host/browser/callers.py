"""Who is calling a tab operation: an agent (with its thread) or a person."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    """An agent (``agent_id``, optional ``thread_id``) or a person (``account_id``)."""

    agent_id: str | None = None
    thread_id: str | None = None
    account_id: str | None = None

    @classmethod
    def agent(cls, agent_id: str, thread_id: str | None = None) -> Caller:
        return cls(agent_id=agent_id, thread_id=thread_id)

    @classmethod
    def person(cls, account_id: str) -> Caller:
        return cls(account_id=account_id)

    @property
    def is_agent(self) -> bool:
        return self.agent_id is not None
