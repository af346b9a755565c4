"""Page dialogs waiting for an answer, and whom they belong to."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from playwright.async_api import Dialog


@dataclass
class PendingDialog:
    """A dialog the page shows. ``agent_id`` is set when an agent's own input action opened it."""

    dialog: Dialog
    agent_id: str | None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def type(self) -> str:
        return self.dialog.type

    @property
    def message(self) -> str:
        return self.dialog.message

    def to_wire(self) -> dict[str, str]:
        return {"id": self.id, "type": self.type, "message": self.message}
