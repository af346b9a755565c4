"""Every rule of ``browser.access``, one row per way a person or an agent meets it.

Each table lists the allowed and the refused combinations; a row names what happens as the
person sees it. A refusal is checked by its error class and code, which the web client and
the CLI turn into the message a person reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pytest

from server.common.errors import Conflict, CrewhostError, Forbidden, NotFound
from server.host.browser import access
from server.host.browser.callers import Caller
from server.host.browser.partitions import Partition
from server.host.browser.protection_state import Protection

ME = "acct-me"
OTHER = "acct-other"
AGENT = "agent-a"
OTHER_AGENT = "agent-b"
THREAD = "thread-1"
OTHER_THREAD = "thread-2"

Protected = Literal["no", "entering", "watchable"]
# None: allowed; otherwise the refusal's class and code.
Outcome = tuple[type[CrewhostError], str] | None


@dataclass(frozen=True)
class OpenDialog:
    """What the rules read of a page dialog: the agent whose own action opened it, if any."""

    agent_id: str | None


@dataclass(frozen=True)
class Facts:
    """A tab as the rules see it (``access.TabFacts``)."""

    partition: Partition = field(default_factory=Partition.shared)
    owner_agent_id: str | None = None
    owner_thread_id: str | None = None
    opened_by: str | None = None
    held_by: str | None = None
    dialog: Any = None
    protection: Protection = Protection.NONE
    closed: bool = False


def tab(
    *,
    private: bool = False,
    agent: str | None = None,
    thread: str | None = None,
    opened_by: str | None = None,
    held_by: str | None = None,
    dialog: OpenDialog | None = None,
    protected: Protected = "no",
) -> Facts:
    phases = {"no": Protection.NONE, "entering": Protection.ENTERING, "watchable": Protection.KEPT}
    return Facts(
        partition=Partition.private() if private else Partition.shared(),
        owner_agent_id=agent,
        owner_thread_id=thread,
        opened_by=opened_by,
        held_by=held_by,
        dialog=dialog,
        protection=phases[protected],
    )


def check(outcome: Outcome, call: Any, *args: Any, **kwargs: Any) -> None:
    if outcome is None:
        call(*args, **kwargs)
        return
    error, code = outcome
    with pytest.raises(CrewhostError) as raised:
        call(*args, **kwargs)
    assert type(raised.value) is error
    assert raised.value.code == code


TAB_NOT_FOUND: Outcome = (NotFound, "tabNotFound")

# (what happens, caller, tab, outcome) for an agent tool or a person's tool call.
TOOL_REACH: list[tuple[str, Caller, Facts, Outcome]] = [
    (
        "a person's tool call reaches an agent's tab",
        Caller.person(ME),
        tab(agent=OTHER_AGENT, thread=OTHER_THREAD),
        None,
    ),
    (
        "a person's tool call reaches a tab with no owner",
        Caller.person(ME),
        tab(opened_by=OTHER),
        None,
    ),
    (
        "an agent in a thread reaches its own tab of that thread",
        Caller.agent(AGENT, THREAD),
        tab(agent=AGENT, thread=THREAD),
        None,
    ),
    (
        "an agent in a thread reaches a tab a person opened in that thread",
        Caller.agent(AGENT, THREAD),
        tab(thread=THREAD, opened_by=ME),
        None,
    ),
    (
        "an agent in a thread reaches another agent's tab of the same thread",
        Caller.agent(AGENT, THREAD),
        tab(agent=OTHER_AGENT, thread=THREAD),
        None,
    ),
    (
        "an agent in a thread does not find its own tab of another thread",
        Caller.agent(AGENT, THREAD),
        tab(agent=AGENT, thread=OTHER_THREAD),
        TAB_NOT_FOUND,
    ),
    (
        "an agent in a thread reaches its own tab opened outside any thread",
        Caller.agent(AGENT, THREAD),
        tab(agent=AGENT),
        None,
    ),
    (
        "an agent in a thread does not find another agent's tab outside any thread",
        Caller.agent(AGENT, THREAD),
        tab(agent=OTHER_AGENT),
        TAB_NOT_FOUND,
    ),
    (
        "an agent in a thread does not find a person's tab outside any thread",
        Caller.agent(AGENT, THREAD),
        tab(opened_by=ME),
        TAB_NOT_FOUND,
    ),
    (
        "an agent outside a thread reaches its own tab",
        Caller.agent(AGENT),
        tab(agent=AGENT),
        None,
    ),
    (
        "an agent outside a thread reaches its own tab of a thread",
        Caller.agent(AGENT),
        tab(agent=AGENT, thread=THREAD),
        None,
    ),
    (
        "an agent outside a thread does not find another agent's tab",
        Caller.agent(AGENT),
        tab(agent=OTHER_AGENT),
        TAB_NOT_FOUND,
    ),
    (
        "an agent outside a thread does not find another agent's tab of a thread",
        Caller.agent(AGENT),
        tab(agent=OTHER_AGENT, thread=THREAD),
        TAB_NOT_FOUND,
    ),
    (
        "an agent outside a thread does not find a tab a person opened in a thread",
        Caller.agent(AGENT),
        tab(thread=THREAD, opened_by=ME),
        TAB_NOT_FOUND,
    ),
]


@pytest.mark.parametrize(
    ("caller", "facts", "outcome"),
    [row[1:] for row in TOOL_REACH],
    ids=[row[0] for row in TOOL_REACH],
)
def test_tool_reach(caller: Caller, facts: Facts, outcome: Outcome) -> None:
    check(outcome, access.require_tool_reach, caller, facts)
    assert access.agent_reaches(caller, facts) is (outcome is None)


# (what happens, member, tab, outcome) for browser control: listing and steering a tab.
MEMBER_REACH: list[tuple[str, str, Facts, Outcome]] = [
    ("a member steers a shared tab an agent opened", ME, tab(agent=AGENT), None),
    ("a member steers a tab another person opened", ME, tab(opened_by=OTHER), None),
    (
        "a member steers a tab of an agent's own partition",
        ME,
        Facts(partition=Partition.for_agent(AGENT), owner_agent_id=AGENT),
        None,
    ),
    (
        "a member steers the private sign-in tab they opened",
        ME,
        tab(private=True, opened_by=ME),
        None,
    ),
    (
        "a member does not find another person's private sign-in tab",
        ME,
        tab(private=True, opened_by=OTHER),
        TAB_NOT_FOUND,
    ),
    (
        "a member does not find a private sign-in tab nobody opened",
        ME,
        tab(private=True, agent=AGENT),
        TAB_NOT_FOUND,
    ),
]


@pytest.mark.parametrize(
    ("account_id", "facts", "outcome"),
    [row[1:] for row in MEMBER_REACH],
    ids=[row[0] for row in MEMBER_REACH],
)
def test_member_reach(account_id: str, facts: Facts, outcome: Outcome) -> None:
    check(outcome, access.require_member_reach, facts, account_id)
    assert access.member_sees(facts, account_id) is (outcome is None)


HOLDS_SECRET: Outcome = (Forbidden, "tabHoldsSecret")

# (what happens, member, tab, taking control as the view opens, outcome) for a live view.
VIEW: list[tuple[str, str, Facts, bool, Outcome]] = [
    ("a member watches a shared tab", ME, tab(agent=AGENT), False, None),
    ("a member watches a tab another person holds", ME, tab(held_by=OTHER), False, None),
    (
        "a member watches their own private sign-in tab",
        ME,
        tab(private=True, opened_by=ME),
        False,
        None,
    ),
    (
        "a member cannot watch another person's private sign-in tab",
        ME,
        tab(private=True, opened_by=OTHER),
        False,
        TAB_NOT_FOUND,
    ),
    (
        "another person's private tab stays unknown even when taking it",
        ME,
        tab(private=True, opened_by=OTHER, protected="watchable"),
        True,
        TAB_NOT_FOUND,
    ),
    (
        "nobody watches a tab while a secret goes in, not even its holder",
        ME,
        tab(held_by=ME, protected="entering"),
        False,
        HOLDS_SECRET,
    ),
    (
        "nobody takes a tab while a secret goes in",
        ME,
        tab(protected="entering"),
        True,
        HOLDS_SECRET,
    ),
    (
        "the holder watches a protected tab that shows no secret",
        ME,
        tab(held_by=ME, protected="watchable"),
        False,
        None,
    ),
    (
        "the holder taking again watches a protected tab that shows no secret",
        ME,
        tab(held_by=ME, protected="watchable"),
        True,
        None,
    ),
    (
        "a member takes a protected tab nobody holds once it shows no secret",
        ME,
        tab(protected="watchable"),
        True,
        None,
    ),
    (
        "a member cannot just watch a protected tab nobody holds",
        ME,
        tab(protected="watchable"),
        False,
        HOLDS_SECRET,
    ),
    (
        "a member cannot watch a protected tab another person holds",
        ME,
        tab(held_by=OTHER, protected="watchable"),
        False,
        HOLDS_SECRET,
    ),
    (
        "a member cannot take a protected tab another person holds",
        ME,
        tab(held_by=OTHER, protected="watchable"),
        True,
        HOLDS_SECRET,
    ),
    (
        "the opener watches their own protected private tab they hold",
        ME,
        tab(private=True, opened_by=ME, held_by=ME, protected="watchable"),
        False,
        None,
    ),
]


@pytest.mark.parametrize(
    ("account_id", "facts", "taking", "outcome"),
    [row[1:] for row in VIEW],
    ids=[row[0] for row in VIEW],
)
def test_live_view(account_id: str, facts: Facts, taking: bool, outcome: Outcome) -> None:
    check(outcome, access.require_viewable, facts, account_id, taking=taking)


@pytest.mark.parametrize(
    ("facts", "holds", "private"),
    [
        (tab(), False, False),
        (tab(protected="entering"), True, False),
        (tab(protected="watchable"), True, False),
        (tab(private=True, opened_by=ME), False, True),
    ],
    ids=["a plain tab", "secret going in", "secret shows no more", "private sign-in"],
)
def test_what_a_tab_is(facts: Facts, holds: bool, private: bool) -> None:
    assert access.holds_secret(facts) is holds
    assert access.is_private(facts) is private


PERSON_MUST_ANSWER = OpenDialog(agent_id=None)
AGENTS_OWN_DIALOG = OpenDialog(agent_id=AGENT)

# (what happens, caller, tab, dialog_ok, outcome) when a call takes its turn on a tab.
TURN: list[tuple[str, Caller, Facts, bool, Outcome]] = [
    ("a person steers a tab nobody holds", Caller.person(ME), tab(), False, None),
    ("a person steers the tab they hold", Caller.person(ME), tab(held_by=ME), False, None),
    (
        "a person is refused on a tab another person holds",
        Caller.person(ME),
        tab(held_by=OTHER),
        False,
        (Conflict, "tabHeld"),
    ),
    (
        "a person steers a tab with a dialog open",
        Caller.person(ME),
        tab(dialog=PERSON_MUST_ANSWER),
        False,
        None,
    ),
    ("an agent acts on a free tab", Caller.agent(AGENT), tab(agent=AGENT), False, None),
    (
        "an agent is refused while a person holds the tab",
        Caller.agent(AGENT),
        tab(agent=AGENT, held_by=ME),
        False,
        (Conflict, "tabHeldByPerson"),
    ),
    (
        "an agent answering a dialog is still refused while a person holds the tab",
        Caller.agent(AGENT),
        tab(agent=AGENT, held_by=ME, dialog=AGENTS_OWN_DIALOG),
        True,
        (Conflict, "tabHeldByPerson"),
    ),
    (
        "an agent is refused while a dialog only a person may answer is open",
        Caller.agent(AGENT),
        tab(agent=AGENT, dialog=PERSON_MUST_ANSWER),
        False,
        (Conflict, "dialogOpen"),
    ),
    (
        "an agent is refused while its own dialog is open, but for answering it",
        Caller.agent(AGENT),
        tab(agent=AGENT, dialog=AGENTS_OWN_DIALOG),
        False,
        (Conflict, "dialogOpen"),
    ),
    (
        "an agent answers a dialog",
        Caller.agent(AGENT),
        tab(agent=AGENT, dialog=AGENTS_OWN_DIALOG),
        True,
        None,
    ),
    (
        "nobody's call runs on a tab closed while it waited",
        Caller.person(ME),
        replace(tab(), closed=True),
        True,
        (NotFound, "tabNotFound"),
    ),
]


@pytest.mark.parametrize(
    ("caller", "facts", "dialog_ok", "outcome"),
    [row[1:] for row in TURN],
    ids=[row[0] for row in TURN],
)
def test_turn(caller: Caller, facts: Facts, dialog_ok: bool, outcome: Outcome) -> None:
    check(outcome, access.require_turn, facts, caller, dialog_ok=dialog_ok)


@pytest.mark.parametrize(
    ("dialog", "says"),
    [
        (AGENTS_OWN_DIALOG, "answer it with handle_dialog"),
        (PERSON_MUST_ANSWER, "a person must answer it"),
    ],
    ids=["its own dialog", "a person's dialog"],
)
def test_a_refused_agent_is_told_who_answers_the_dialog(dialog: OpenDialog, says: str) -> None:
    with pytest.raises(Conflict, match=says):
        access.require_turn(tab(agent=AGENT, dialog=dialog), Caller.agent(AGENT))
