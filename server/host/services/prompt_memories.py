"""The memories without a site of recently active agents, kept in the order a turn takes them.

Every turn reads all of an agent's memories without a site (up to 1,000) to choose the ones
its block carries. The memory service is the only writer of memories, so it keeps what
it read here and drops an agent's rows whenever it writes one of them; the uses a block
counts are applied here as they are written, so the rows keep the database's order.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from server.host.storage.memories import PromptCandidate

# Agents whose rows are kept: a host's busy agents fit, an idle one is read again.
KEPT_AGENTS = 256


@dataclass(slots=True)
class PromptRow:
    """One memory without a site, as a turn's block weighs and orders it."""

    id: str
    text: str
    pinned: bool
    active_at: float | None
    uses: int
    member_id: str | None

    def order_key(self) -> tuple[bool, float, int, str]:
        """Essential first, then last active, most used, and the id, all descending; a
        memory never active sorts after every active one."""
        active = self.active_at if self.active_at is not None else float("-inf")
        return (self.pinned, active, self.uses, self.id)


class PromptRows:
    """The agents' rows, by (team, agent), least recently used dropped first.

    ``generation`` moves on every write; rows read before a write that ended while they
    were read are not kept (``keep`` refuses them), so a write never loses to a read."""

    def __init__(self, kept_agents: int = KEPT_AGENTS) -> None:
        self._rows: OrderedDict[tuple[str, str], list[PromptRow]] = OrderedDict()
        self._kept_agents = kept_agents
        self.generation = 0

    def get(self, team_id: str, agent_id: str) -> list[PromptRow] | None:
        rows = self._rows.get((team_id, agent_id))
        if rows is not None:
            self._rows.move_to_end((team_id, agent_id))
        return rows

    def keep(
        self, team_id: str, agent_id: str, rows: list[PromptRow], read_at_generation: int
    ) -> None:
        """Keeps rows read (in the database's order) while ``generation`` was
        ``read_at_generation``; rows a write overtook are not kept."""
        if read_at_generation != self.generation:
            return
        self._rows[(team_id, agent_id)] = rows
        self._rows.move_to_end((team_id, agent_id))
        while len(self._rows) > self._kept_agents:
            self._rows.popitem(last=False)

    def forget(self, team_id: str, agent_id: str) -> None:
        """One of the agent's memories was written: its rows are read again."""
        self.generation += 1
        self._rows.pop((team_id, agent_id), None)

    def used(self, team_id: str, memory_ids: Iterable[str], now: float) -> None:
        """The uses just written: one more each, active ``now``, in every agent's rows."""
        self.generation += 1
        ids = set(memory_ids)
        for (team, _agent), rows in self._rows.items():
            if team != team_id:
                continue
            touched = False
            for row in rows:
                if row.id in ids:
                    row.uses += 1
                    row.active_at = now
                    touched = True
            if touched:
                rows.sort(key=PromptRow.order_key, reverse=True)


def seen_by(rows: Sequence[PromptRow], member_id: str | None) -> list[PromptRow]:
    """The team's rows and, ``member_id`` given, that member's own."""
    if member_id is None:
        return [row for row in rows if row.member_id is None]
    return [row for row in rows if row.member_id is None or row.member_id == member_id]


def candidates(rows: Sequence[PromptRow]) -> list[PromptCandidate]:
    return [PromptCandidate(row.id, len(row.text), row.pinned) for row in rows]
