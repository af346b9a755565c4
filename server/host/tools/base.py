"""What every agent tool shares: its context, its description, its failures and its result cap.

A tool is a plain async function over a ``ToolContext``. It returns a JSON-ready
dict; a refusal is a ``ToolFailure`` that ``call_tool`` turns into
``{"error": {"code", "message"}}``, so the agent runtime never sees an exception.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from server.common.errors import CrewhostError
from server.common.protocol.events import HostEvent
from server.config import HostSettings
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition

if TYPE_CHECKING:
    from server.host.services.memories import MemoryService

MAX_RESULT_CHARS = 20_000
_CUT_MARK = "\n[... cut: the result was longer than 20,000 characters]"


@dataclass
class TurnState:
    """State of one agent turn (one model response and the tool calls it makes)."""

    memory_hosts_shown: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class ToolSettings:
    """The timings tools wait by; tests shorten them."""

    # Cookie banners: how long after DOM ready a reject button is looked for.
    consent_window: float = 15.0
    # Bot checks: shared wait per document, and the wait after the one offered click.
    challenge_budget: float = 15.0
    challenge_click_wait: float = 6.0
    # How much of that wait the snapshot that ``navigate`` returns may spend.
    navigate_challenge_wait: float = 4.0
    # ...how often a waiting read looks again, and how long a Turnstile widget is given to
    # pass by itself before its checkbox is offered.
    challenge_poll: float = 1.0
    challenge_token_wait: float = 3.0
    # Settle: quiet time without skeletons or busy regions, and the longest wait.
    settle_quiet: float = 0.15
    settle_max: float = 2.0
    # A young document without controls waits for its first change: at most this long
    # while it loads, and until this long after its load event once loaded.
    young_document: float = 1.0
    young_after_load: float = 0.5
    # A document is young for this long after it started.
    young_document_age: float = 2.5
    # fill_fields: the whole set must be typed within this.
    fill_deadline: float = 30.0
    # wait_for: the default and the longest timeout an agent may ask for.
    wait_default: float = 10.0
    wait_max: float = 30.0
    # After a click, how long the page is watched for a change before NOT VERIFIED.
    click_observe: float = 0.5
    # How long a click, hover or check waits for its target to be visible, still and uncovered.
    action_timeout: float = 5.0
    # The longest an evaluate script may run.
    evaluate_deadline: float = 10.0
    # Where a search phrase typed into navigate or open goes; {query} is the phrase.
    search_url: str = HostSettings.model_fields["search_url"].default

    @classmethod
    def from_settings(cls, host: HostSettings) -> ToolSettings:
        """The tools' settings for a host: the timings above, the host's search address."""
        return cls(search_url=host.search_url)


@dataclass
class ToolContext:
    """Everything a tool call may use: the engine, whose call it is, and the turn it is in."""

    engine: BrowserEngine
    team_id: str
    caller: Caller
    turn: TurnState = field(default_factory=TurnState)
    memories: MemoryService | None = None
    settings: ToolSettings = field(default_factory=ToolSettings)
    # Where the calling agent's new tabs open (the profile service's partition_for_agent,
    # given team and agent ids); without it they open in the team's shared partition.
    partition_for_agent: Callable[[str, str], Awaitable[Partition]] | None = None
    # Tells the team's members something (event name and payload), such as a request to
    # take a tab over; without it the agent's own answer is the only word they get.
    announce: Callable[[str, HostEvent], None] | None = None


class ToolFailure(CrewhostError):
    """A refusal or failure a tool reports to the agent; ``extra`` joins the error object.

    One of the error hierarchy's own: a tool result renders it, like any other
    ``CrewhostError`` a service raises, with ``to_wire``.
    """

    status = 422
    code = "toolFailed"

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        super().__init__(message, code=code)
        self.extra = extra

    def to_wire(self) -> dict[str, Any]:
        return {**super().to_wire(), **self.extra}

    def to_result(self) -> dict[str, Any]:
        return {"error": self.to_wire()}


@dataclass(frozen=True)
class Tool:
    """One catalog entry: what the model reads about it and the function that runs it."""

    name: str
    description: str
    args: type[BaseModel]
    gated: bool
    run: Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the tool's input, as advertised to a model."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return schema


class ToolArgs(BaseModel):
    """Base of every tool's input: camelCase on the wire, nothing unknown accepted.

    The Python names are accepted too, so code (and tests) can build arguments directly.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class TabArgs(ToolArgs):
    """Input of a tool that works on one tab: ``tabId`` names it (as ``open`` or
    ``list_tabs`` gave it)."""

    tab_id: str = Field(min_length=1, description="The tab's id, from open or list_tabs.")


class RefTarget(ToolArgs):
    """An element by its snapshot ref ``<revision>:<frame>:<n>``."""

    kind: Literal["ref"] = "ref"
    ref: str = Field(description="A ref from the latest snapshot, such as 3:main:12.")
    revision: int | None = Field(
        default=None, description="The snapshot revision; taken from the ref when left out."
    )


class CssTarget(ToolArgs):
    """An element by a CSS selector that must match exactly one element (open shadow roots
    and same-origin frames included)."""

    kind: Literal["css"] = "css"
    selector: str = Field(min_length=1)


class RoleTarget(ToolArgs):
    """An element by its accessible role and name, as a snapshot line shows them."""

    kind: Literal["role"] = "role"
    role: str = Field(min_length=1)
    name: str | None = None


class TextTarget(ToolArgs):
    """An actionable element whose visible text is exactly ``text``."""

    kind: Literal["text"] = "text"
    text: str = Field(min_length=1)


class PointTarget(ToolArgs):
    """A point in the viewport, in CSS pixels (such as a bot-check checkbox a snapshot offers)."""

    kind: Literal["point"] = "point"
    x: float
    y: float


Target = Annotated[
    RefTarget | CssTarget | RoleTarget | TextTarget | PointTarget, Field(discriminator="kind")
]


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def _largest_text(value: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], int] | None:
    """The path to the longest string in ``value`` and its length."""
    best: tuple[tuple[Any, ...], int] | None = None
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    elif isinstance(value, str):
        return path, len(value)
    for key, child in items:
        found = _largest_text(child, (*path, key))
        if found is not None and (best is None or found[1] > best[1]):
            best = found
    return best


def _largest_list(value: Any, path: tuple[Any, ...] = ()) -> tuple[tuple[Any, ...], int] | None:
    """The path to the longest list in ``value`` and its length."""
    best: tuple[tuple[Any, ...], int] | None = None
    if isinstance(value, list) and value:
        best = (path, len(value))
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    for key, child in children:
        found = _largest_list(child, (*path, key))
        if found is not None and (best is None or found[1] > best[1]):
            best = found
    return best


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def cap_result(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as at most 20,000 characters of JSON, with ``truncated: True`` when cut.

    The longest text (a tree or a page's Markdown) is shortened first, then the
    longest list, so what stays is still well-formed and says it is incomplete.
    """
    if _size(result) <= MAX_RESULT_CHARS:
        return result
    capped: dict[str, Any] = json.loads(json.dumps(result, ensure_ascii=False, default=str))
    capped["truncated"] = True
    for _ in range(64):
        over = _size(capped) - MAX_RESULT_CHARS
        if over <= 0:
            return capped
        text = _largest_text(capped)
        if text is not None and text[1] > len(_CUT_MARK) + 64:
            path, length = text
            original: str = _get(capped, path)
            # JSON escapes can make a character cost more than one; cut with a margin.
            keep = max(0, length - over - len(_CUT_MARK) - 16 - over // 8)
            _replace(capped, path, original[:keep] + _CUT_MARK)
            continue
        found = _largest_list(capped)
        if found is not None:
            path, length = found
            _replace(capped, path, _get(capped, path)[: length // 2])
            continue
        break
    if _size(capped) <= MAX_RESULT_CHARS:
        return capped
    return {
        "error": {"code": "resultTooLarge", "message": "the result could not be cut to size"},
        "truncated": True,
    }
