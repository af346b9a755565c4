"""What every agent tool shares: its context, its description, its failures and its result cap.

A tool is a plain async function over a ``ToolContext``. It returns a JSON-ready
dict; a refusal is a ``ToolFailure`` that ``call_tool`` turns into
``{"error": {"code", "message"}}``, so the agent runtime never sees an exception.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from server.common.errors import CrewhostError
from server.common.protocol.events import HostEvent
from server.config import HostSettings
from server.host.browser.callers import Caller
from server.host.browser.engine import BrowserEngine
from server.host.browser.partitions import Partition

if TYPE_CHECKING:
    from server.common.protocol.events import SecretRequestDetails, VaultItemRequestDetails
    from server.host.services.memories import MemoryService
    from server.host.services.tasks import ThreadTasks
    from server.host.services.vault import VaultService
    from server.host.services.workspace import WorkspaceService
    from server.host.web.fetcher import WebFetcher
    from server.host.web.search import SearchResult

# The team's web search: (query, max_results) to results.
SearchWeb = Callable[[str, int], Awaitable[list["SearchResult"]]]
# Distils ``content`` as ``prompt`` asks, with the calling agent's model: (prompt, content).
Summarize = Callable[[str, str], Awaitable[str]]

MAX_RESULT_CHARS = 20_000


@dataclass(frozen=True)
class PersonQuestion:
    """A question an agent asks the people who see its thread."""

    call_id: str
    question: str
    options: list[str] | None
    multiple: bool


# Asks a question; the answer (None when none came) and why: answered, expired or cancelled.
AskPerson = Callable[[PersonQuestion], Awaitable[tuple[str | list[str] | None, str]]]

SubAgentType = Literal["researcher", "page_operator", "general"]


@dataclass(frozen=True)
class SubAgentRequest:
    """A sub-task an agent hands to a sub-agent of its own."""

    prompt: str
    description: str
    type: SubAgentType
    tab_id: str | None


@dataclass(frozen=True)
class SubAgentReport:
    """How a sub-agent ended: its status, its last words and the tool calls it used."""

    sub_agent_id: str
    status: str
    reason: str | None
    report: str
    tool_calls: int


# Runs a sub-agent to its end within the calling turn; None when the turn has no tool
# calls left to give it.
SpawnSubAgent = Callable[[SubAgentRequest], Awaitable[SubAgentReport | None]]
_CUT_MARK = "\n[... cut: the result was longer than 20,000 characters]"


@dataclass
class TurnState:
    """State of one agent turn (one model response and the tool calls it makes)."""

    memory_hosts_shown: set[str] = field(default_factory=set)
    # The id of the call that runs now (a question a tool asks is bound to it).
    call_id: str | None = None


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
    # After a script's deadline: how long stopping it, and the page's answer after, may take;
    # then how long a page that still does not answer is given to end.
    script_answer_wait: float = 2.0
    script_end_wait: float = 5.0
    # Secure entry: how long a person has to answer, and how long a submit that keeps the
    # document is given before the fields are emptied and the page is scanned.
    secret_answer_wait: float = 300.0
    secret_submit_wait: float = 5.0
    # Where a search phrase typed into navigate or open goes; {query} is the phrase.
    search_url: str = HostSettings.model_fields["search_url"].default

    @classmethod
    def from_settings(cls, host: HostSettings) -> ToolSettings:
        """The tools' settings for a host: the timings above, the host's search address."""
        return cls(search_url=host.search_url)


@dataclass(frozen=True)
class PersonReply:
    """How a request for a secret or a vault item ended; ``payload`` is what the person
    sent (a secret, a new item's id), never shown in a repr."""

    outcome: Literal["answered", "declined", "timeout", "cancelled"]
    payload: Any = field(default=None, repr=False)


class AskForSecret(Protocol):
    """The attention registry's ``ask_person``: a request to the people of a thread for a
    secret or a new vault item."""

    async def __call__(
        self,
        *,
        team_id: str,
        thread_id: str,
        agent_id: str,
        tool: str,
        summary: str,
        visible_to: Callable[[str], bool],
        secret: SecretRequestDetails | None = None,
        vault_item: VaultItemRequestDetails | None = None,
        seconds: float | None = None,
    ) -> PersonReply: ...


@dataclass(frozen=True)
class SecureEntryDesk:
    """What secure entry reaches besides the page: the people who see the turn's thread and
    the team's vault. (The tab's live views close on ``ProtectionChanged``.)"""

    ask_person: AskForSecret
    vault: VaultService
    # Who sees the thread; None where the call cannot raise attention (outside a thread).
    visible_to: Callable[[str], bool] | None


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool call may use: the engine, whose call it is, and the turn it is in."""

    engine: BrowserEngine
    team_id: str
    caller: Caller
    turn: TurnState = field(default_factory=TurnState)
    memories: MemoryService | None = None
    # The member whose private thread the turn is in: their memories join the team's in
    # what the turn reads, and what it keeps is theirs. None: a shared thread, the team's.
    memory_member: str | None = None
    # The turn the call is in (where a memory ``remember`` keeps came from).
    turn_id: str | None = None
    settings: ToolSettings = field(default_factory=ToolSettings)
    # Where the calling agent's new tabs open (the profile service's partition_for_agent,
    # given team and agent ids); without it they open in the team's shared partition.
    partition_for_agent: Callable[[str, str], Awaitable[Partition]] | None = None
    # Tells the team's members something (event name and payload), such as a request to
    # take a tab over; without it the agent's own answer is the only word they get.
    announce: Callable[[str, HostEvent], None] | None = None
    # web_fetch's fetcher (public addresses only, unless the host allows more); without it
    # the tool says the host does not fetch.
    web: WebFetcher | None = None
    # The calling agent's way out when its browser profile has a proxy: the proxy as an
    # http:// address for the block's length (None: Automatic, straight out), so web_fetch
    # leaves where the agent's browser does.
    fetch_proxy: Callable[[], AbstractAsyncContextManager[str | None]] | None = None
    # web_search's engine, the one the team chose; without it the tool says none is set.
    search: SearchWeb | None = None
    # The calling agent's model, for a tool's ``prompt`` (web_fetch, get_tab_content).
    summarize: Summarize | None = None
    # The agent's workspace files and the team's shared ones.
    workspace: WorkspaceService | None = None
    # Asks the members who see the thread a question (ask_user); without it nobody is asked.
    ask_person: AskPerson | None = None
    # The thread's task list (create_task and the rest).
    tasks: ThreadTasks | None = None
    # Starts a sub-agent (the agent tool); None in a sub-agent: no recursion.
    spawn_sub_agent: SpawnSubAgent | None = None
    # A sub-agent's context: it may not ask people, nor start sub-agents of its own.
    sub_agent: bool = False
    # Secure entry (submit_secret, fill_from_vault, request_vault_item); without it they refuse.
    secure_entry: SecureEntryDesk | None = None


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
    # A gated tool says in one line, for the person asked, what a call will do and where
    # (``Click “Empty basket” on Shop (shop.test)``), from the validated arguments.
    describe: Callable[[ToolContext, Any], Awaitable[str]] | None = None

    def __post_init__(self) -> None:
        if self.gated and self.describe is None:
            raise TypeError(f"the gated tool {self.name} must describe its calls")

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


# Where a value sits inside a result: the keys and indexes that lead to it.
_Path = tuple[str | int, ...]
# A string, list or dict inside a result: its path, itself and its serialized length.
_Part = tuple[_Path, Any, int]
# What a cut can shorten; a result read back from JSON holds these types exactly.
_CUTTABLE = frozenset({str, list, dict})
# A string shorter than this is never cut: a name or an address is kept whole or dropped.
_SHORTEST_CUT = len(_CUT_MARK) + 64


def serialize_result(result: dict[str, Any]) -> str:
    """A tool result as the text the model reads: the one place a result becomes text.

    JSON with non-ASCII characters written as themselves (``ensure_ascii=False``: a CJK
    or accented character is one character, not a six-character ``\\uXXXX`` escape),
    the separators ``", "`` and ``": "``, and ``str()`` of a value JSON has no form for.
    ``cap_result`` measures ``MAX_RESULT_CHARS`` on this string, in Python characters
    (code points), and the agent runtime puts this string unchanged in the call's
    ``ToolResult``. Both provider adapters send that string as the tool result's text
    (the OpenAI one puts ``Error: `` before a failed call's); the HTTP body carrying it is
    JSON again and may escape it, but that is transport, undone before the model reads it.
    """
    return _json(result)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), default=str)


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


def _parts(result: dict[str, Any]) -> list[_Part]:
    """Every string, list and dict inside ``result`` (not ``result`` itself) with its path
    and serialized length, in document order.

    ``result`` holds only what JSON does (it was read back from JSON), so a container's
    length is the sum of its parts' and its punctuation's, counted once, bottom up.
    """
    found: list[_Part] = []

    def walk(value: Any, path: _Path) -> int:
        if isinstance(value, str):
            length = len(_json(value))
            if path:
                found.append((path, value, length))
            return length
        if not isinstance(value, dict | list):
            return len(_json(value))
        index = len(found)
        found.append((path, value, 0))  # its length is known once its parts' are
        if isinstance(value, dict):
            inner = [
                len(_json(key)) + 2 + walk(child, (*path, key)) for key, child in value.items()
            ]
        elif not _CUTTABLE.isdisjoint(map(type, value)):
            inner = [walk(child, (*path, n)) for n, child in enumerate(value)]
        else:  # numbers, booleans and nulls only: nothing inside to cut, measured at once
            found[index] = (path, value, len(_json(value)))
            return found[index][2]
        length = 2 + sum(inner) + 2 * max(0, len(inner) - 1)
        found[index] = (path, value, length)
        return length

    walk(result, ())
    return found[1:]


def _largest(parts: list[_Part]) -> _Part:
    """Of ``parts`` (not empty), the one that serializes longest; of equals the last, so
    earlier content stays."""
    best = parts[0]
    for part in parts:
        if part[2] >= best[2]:
            best = part
    return best


def _replace(result: dict[str, Any], path: _Path, new: Any) -> None:
    value: Any = result
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _longest_fitting(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in ``low..high`` with ``fits(n)``, given ``fits(low)`` and that ``fits``
    stays true below any n where it holds."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _cut_text(result: dict[str, Any], parts: list[_Part], size: int, *, whole_excess: bool) -> bool:
    """Shortens the longest string, keeping the longest prefix whose serialized form fits.

    With ``whole_excess`` only when that one cut brings ``result`` within the cap;
    otherwise the string is cut to the mark alone. False when no string qualifies.
    """
    texts = [part for part in parts if isinstance(part[1], str) and len(part[1]) > _SHORTEST_CUT]
    if not texts:
        return False
    path, text, cost = _largest(texts)
    room = MAX_RESULT_CHARS - (size - cost)  # what the string's own JSON may take
    mark_cost = len(_json(_CUT_MARK))
    if whole_excess and mark_cost > room:
        return False
    # Each kept character costs at least one, so no more than ``room`` can be kept.
    keep = _longest_fitting(
        lambda n: len(_json(text[:n])) + mark_cost - 2 <= room, 0, min(len(text), room)
    )
    if 0 < keep < len(text) and "\ud800" <= text[keep - 1] <= "\udbff":
        keep -= 1  # not between the halves of a surrogate pair
    _replace(result, path, text[:keep] + _CUT_MARK)
    return True


def _cut_items(result: dict[str, Any], parts: list[_Part], size: int, *, least: int) -> bool:
    """Drops the last items of a list (or entries of a dict below the top) with at least
    ``least`` items, keeping as many as fit.

    A container that can take the whole excess is chosen first, and then one item more
    than fits is kept, so the next cut can shorten that item's text rather than lose it.
    False when no container qualifies.
    """
    containers = [
        part for part in parts if isinstance(part[1], list | dict) and len(part[1]) >= least
    ]
    if not containers:
        return False
    # Best the last list (in document order) that can take the whole excess, so what is
    # dropped is the end of what there is; then such a dict; then the largest container.
    enough = [part for part in containers if size - part[2] + 2 <= MAX_RESULT_CHARS]
    lists = [part for part in enough if isinstance(part[1], list)]
    path, container, cost = (lists or enough)[-1] if enough else _largest(containers)
    items: list[Any] = list(container.items()) if isinstance(container, dict) else container

    def rebuilt(count: int) -> Any:
        return dict(items[:count]) if isinstance(container, dict) else items[:count]

    room = MAX_RESULT_CHARS - (size - cost)
    fitting = _longest_fitting(lambda n: len(_json(rebuilt(n))) <= room, 0, len(items) - 1)
    _replace(result, path, rebuilt(fitting + 1 if fitting + 1 < len(items) else fitting))
    return True


def cap_result(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` as at most ``MAX_RESULT_CHARS`` characters of ``serialize_result``, with
    ``truncated: True`` when cut.

    The cut is measured, not estimated: the longest string keeps the longest prefix whose
    JSON (escapes included) fits, followed by a mark saying it was cut; a list keeps as
    many items as fit. What stays is still well-formed and says it is incomplete.
    """
    text = serialize_result(result)
    if len(text) <= MAX_RESULT_CHARS:
        return result
    capped: dict[str, Any] = json.loads(text)
    capped["truncated"] = True
    # Each cut shortens a string to a prefix or drops items, so the loop ends; the bound is
    # a guard against a result shaped to make it slow.
    for _ in range(1_000):
        size = len(serialize_result(capped))
        if size <= MAX_RESULT_CHARS:
            return capped
        parts = _parts(capped)
        cut = (
            _cut_text(capped, parts, size, whole_excess=True)
            or _cut_items(capped, parts, size, least=2)
            or _cut_text(capped, parts, size, whole_excess=False)
            or _cut_items(capped, parts, size, least=1)
        )
        if not cut:
            break
    return {
        "error": {"code": "resultTooLarge", "message": "the result could not be cut to size"},
        "truncated": True,
    }
