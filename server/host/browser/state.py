"""The team's tab state file, so a restart brings each tab back in its own partition."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.common.errors import CrewhostError
from server.host.browser.partitions import Partition

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SavedTab:
    """One tab as the state file keeps it."""

    id: str
    partition: Partition
    url: str
    owner_agent_id: str | None
    owner_thread_id: str | None
    title: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "partition": {"kind": self.partition.kind, "key": self.partition.key},
            "url": self.url,
            "title": self.title,
            "ownerAgentId": self.owner_agent_id,
            "ownerThreadId": self.owner_thread_id,
        }


# The longest title a saved tab brings back (the tab list shows no more).
MAX_SAVED_TITLE = 300
# The state file's name in the team's folder.
STATE_FILE = "tabs.json"


def state_path(team_folder: Path) -> Path:
    return team_folder / STATE_FILE


def write_state(team_folder: Path, tabs: list[SavedTab]) -> None:
    """Writes the file whole through a temporary one, so a crash never leaves half a file."""
    team_folder.mkdir(parents=True, exist_ok=True)
    path = state_path(team_folder)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"version": 1, "tabs": [t.to_json() for t in tabs]}))
    os.replace(temporary, path)


def read_state(team_folder: Path) -> list[SavedTab]:
    """The saved tabs; an entry without a valid partition is dropped, never opened elsewhere."""
    try:
        raw = json.loads(state_path(team_folder).read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        log.warning("unreadable browser state file in %s; starting without tabs", team_folder)
        return []
    saved: list[SavedTab] = []
    for entry in raw.get("tabs", []) if isinstance(raw, dict) else []:
        try:
            part = entry.get("partition") or {"kind": "shared"}
            partition = Partition.parse(str(part.get("kind")), str(part.get("key", "")))
            if not partition.persistent:
                continue
            saved.append(
                SavedTab(
                    id=str(entry["id"]),
                    partition=partition,
                    url=str(entry.get("url") or "about:blank"),
                    owner_agent_id=entry.get("ownerAgentId"),
                    owner_thread_id=entry.get("ownerThreadId"),
                    title=str(entry.get("title") or "")[:MAX_SAVED_TITLE],
                )
            )
        except (CrewhostError, KeyError, AttributeError, TypeError):
            log.warning("dropped a saved tab with a malformed partition")
    return saved
