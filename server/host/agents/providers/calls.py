"""Tool calls being streamed: their argument fragments, and the verdict once the reply stops."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from server.common.json_text import read_json
from server.host.agents.providers.events import (
    StreamToolCallFinished,
    ToolCallDropped,
    ToolCallInvalid,
)

ToolCallVerdict = StreamToolCallFinished | ToolCallInvalid | ToolCallDropped

CUT_OFF_REASON = (
    "the reply reached its max_tokens limit before this tool call's arguments were complete"
)


@dataclass
class PendingCall:
    """One tool call whose arguments are still arriving."""

    id: str
    name: str
    fragments: list[str] = field(default_factory=list)
    closed: bool = False  # the wire format said the call is complete (Anthropic's block stop)

    @property
    def raw_arguments(self) -> str:
        return "".join(self.fragments)

    def verdict(self, *, cut_off: bool) -> ToolCallVerdict:
        """Finished when the arguments parse as an object; else dropped when the reply was
        cut off by its token limit (the arguments are incomplete), else invalid."""
        raw = self.raw_arguments
        try:
            # No arguments at all is how some providers send a call of a tool without input.
            arguments = read_json(raw) if raw.strip() else {}
        except (ValueError, RecursionError) as error:
            if cut_off:
                return ToolCallDropped(self.id, self.name, CUT_OFF_REASON)
            why = error.msg if isinstance(error, json.JSONDecodeError) else "nested too deeply"
            return ToolCallInvalid(
                self.id, self.name, raw, f"the arguments are not valid JSON ({why})"
            )
        if not isinstance(arguments, dict):
            if cut_off:
                return ToolCallDropped(self.id, self.name, CUT_OFF_REASON)
            return ToolCallInvalid(self.id, self.name, raw, "the arguments are not a JSON object")
        return StreamToolCallFinished(self.id, self.name, arguments)
