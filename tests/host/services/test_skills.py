"""The skill store on both databases: every save a version, a diff of each file between two,
a revert that is a new version, drafts that no agent lists until saved, the skills each
agent has (only their names and descriptions in its prompt, their bodies on demand), and
nothing ever across teams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest
from sqlalchemy.ext.asyncio import AsyncConnection

from server.common.errors import CrewhostError, NotFound
from server.common.protocol.events import HostEvent, SkillsChanged
from server.common.roles import Role
from server.db.engine import Database
from server.host.services.skills import MAX_READ_CHARS, SkillService, skills_prompt
from server.host.services.workspace import Member
from server.host.storage.skills import EnabledSkill
from tests.support.clock import FakeClock

TEAM_A, TEAM_B = "a" * 32, "b" * 32
AGENT, OTHER_AGENT, NO_AGENT = "c" * 32, "d" * 32, "e" * 32
ADMIN = Member(TEAM_A, "1" * 32, Role.ADMIN)
OUTSIDER = Member(TEAM_B, "2" * 32, Role.OWNER)


def skill_md(name: str, description: str, body: str) -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n".encode()


@dataclass
class Heard:
    events: list[tuple[str, HostEvent]] = field(default_factory=list)

    def __call__(self, team_id: str, event: HostEvent) -> None:
        self.events.append((team_id, event))

    def changes(self) -> list[tuple[str, str]]:
        return [(e.name, e.change) for _, e in self.events if isinstance(e, SkillsChanged)]


async def agents_of_a(team_id: str, agent_id: str) -> object:
    if team_id != TEAM_A or agent_id not in (AGENT, OTHER_AGENT):
        raise NotFound("no such agent", code="agentNotFound")
    return agent_id


@pytest.fixture
def heard() -> Heard:
    return Heard()


@pytest.fixture
def skills(db: Database, heard: Heard) -> SkillService:
    return SkillService(db, FakeClock(1_000.0), heard, agents_of_a)


async def code_of(awaitable: object) -> str:
    with pytest.raises(CrewhostError) as caught:
        await awaitable  # type: ignore[misc]
    return caught.value.code


async def test_every_save_is_a_version_with_a_diff_and_a_revert(
    skills: SkillService, heard: Heard
) -> None:
    first = {"SKILL.md": skill_md("expenses", "File expenses.", "1. Open the form.")}
    await skills.create(ADMIN, first)
    await skills.edit(
        ADMIN,
        "expenses",
        {
            "SKILL.md": skill_md(
                "expenses", "File expense reports.", "1. Open the form.\n2. Save."
            ),
            "notes.md": b"Receipts over 50 EUR.\n",
        },
        [],
    )
    reverted = await skills.revert(ADMIN, "expenses", 1)
    assert (reverted.version, reverted.description) == (3, "File expenses.")
    _skill, versions = await skills.versions(TEAM_A, "expenses")
    assert [(v.version, v.change, v.reverted_from, v.files) for v in versions] == [
        (3, "reverted", 1, 1),
        (2, "edited", None, 2),
        (1, "created", None, 1),
    ]
    assert (await skills.get_skill(TEAM_A, "expenses")).files == first
    changes = await skills.diff(TEAM_A, "expenses", 1, 2)
    assert [(c.path, c.status) for c in changes] == [("SKILL.md", "changed"), ("notes.md", "added")]
    assert "-description: File expenses.\n+description: File expense reports.\n" in changes[0].diff
    assert "+2. Save.\n" in changes[0].diff
    assert changes[1].diff.startswith("--- /dev/null\n+++ v2/notes.md\n")
    assert await skills.diff(TEAM_A, "expenses", 1, 3) == []
    assert heard.changes() == [
        ("expenses", "created"),
        ("expenses", "edited"),
        ("expenses", "reverted"),
    ]
    assert await code_of(skills.get_skill(TEAM_A, "expenses", 9)) == "skillVersionNotFound"


async def test_names_are_the_front_matters_and_unique_per_team(skills: SkillService) -> None:
    files = {"SKILL.md": skill_md("expenses", "File expenses.", "Steps")}
    await skills.create(ADMIN, files)
    assert await code_of(skills.create(ADMIN, files)) == "skillNameTaken"
    renamed = {"SKILL.md": skill_md("travel", "Book travel.", "Steps")}
    assert await code_of(skills.update(ADMIN, "expenses", renamed)) == "skillInvalid"
    # Another team has its own names.
    await skills.create(OUTSIDER, files)
    assert await code_of(skills.edit(ADMIN, "expenses", {}, ["nothing.md"])) == (
        "skillFileNotFound"
    )


async def test_front_matter_nested_past_the_parsers_depth_is_invalid(
    skills: SkillService,
) -> None:
    nested = "[" * 3_000 + "]" * 3_000  # within the front matter's size, deeper than YAML goes
    text = f"---\nname: deep\ndescription: Deep.\nmetadata: {nested}\n---\n\nSteps\n"
    with pytest.raises(CrewhostError) as refused:
        await skills.create(ADMIN, {"SKILL.md": text.encode()})
    assert refused.value.code == "skillInvalid"
    assert "nests deeper than 16 levels" in refused.value.message
    assert await skills.list_skills(TEAM_A) == []


async def test_another_team_never_sees_a_skill(skills: SkillService) -> None:
    await skills.create(ADMIN, {"SKILL.md": skill_md("expenses", "File expenses.", "Steps")})
    await skills.enable(ADMIN, AGENT, "expenses", enabled=True)
    assert await skills.list_skills(TEAM_B) == []
    for read in (
        skills.get_skill(TEAM_B, "expenses"),
        skills.versions(TEAM_B, "expenses"),
        skills.export_archive(TEAM_B, "expenses"),
        skills.delete(OUTSIDER, "expenses"),
        skills.revert(OUTSIDER, "expenses", 1),
        skills.load(TEAM_B, AGENT, "expenses"),
    ):
        assert await code_of(read) == "skillNotFound"
    assert await skills.agent_skills(TEAM_B, AGENT) == []
    assert await code_of(skills.enable(OUTSIDER, AGENT, "expenses", enabled=True)) == (
        "agentNotFound"
    )


async def test_an_agent_reads_only_its_saved_skills_and_only_on_demand(
    skills: SkillService,
) -> None:
    body = "1. Open the form.\n" + "x" * (MAX_READ_CHARS + 10)
    await skills.create(
        ADMIN,
        {
            "SKILL.md": skill_md("expenses", "File expenses.", body),
            "scripts/total.js": b"return 2 + 2;",
            "logo.png": b"\x89PNG\xff\xfe",
        },
    )
    await skills.create(ADMIN, {"SKILL.md": skill_md("travel", "Book travel.", "Steps")})
    await skills.enable(ADMIN, AGENT, "expenses", enabled=True)
    assert [s.name for s in await skills.agent_skills(TEAM_A, AGENT)] == ["expenses"]
    text, files, cut = await skills.load(TEAM_A, AGENT, "expenses")
    assert text.startswith("1. Open the form.")
    assert cut
    assert len(text) == MAX_READ_CHARS
    assert files == ["logo.png", "scripts/total.js"]
    assert await skills.read_file(TEAM_A, AGENT, "expenses", "scripts/total.js") == (
        "return 2 + 2;",
        13,
        False,
    )
    assert await code_of(skills.read_file(TEAM_A, AGENT, "expenses", "logo.png")) == (
        "skillFileNotText"
    )
    assert await code_of(skills.read_file(TEAM_A, AGENT, "expenses", "../x")) == "skillInvalid"
    # Not enabled for it, or for another agent: unknown to the agent.
    assert await code_of(skills.load(TEAM_A, AGENT, "travel")) == "skillNotFound"
    assert await code_of(skills.load(TEAM_A, OTHER_AGENT, "expenses")) == "skillNotFound"
    block = await skills.prompt_block(TEAM_A, AGENT)
    assert "- expenses: File expenses." in block
    assert "Open the form" not in block
    assert "travel" not in block
    assert await skills.enable(ADMIN, AGENT, "expenses", enabled=False) is True
    assert await skills.prompt_block(TEAM_A, AGENT) == ""
    assert await code_of(skills.enable(ADMIN, NO_AGENT, "expenses", enabled=True)) == (
        "agentNotFound"
    )


async def test_a_proposed_draft_is_listed_to_no_agent_until_a_person_saves_it(
    skills: SkillService, heard: Heard
) -> None:
    draft = await skills.propose(
        TEAM_A, AGENT, "f" * 32, "expenses", "File expenses.", "1. Open the form."
    )
    assert (draft.state, draft.source_agent_id, draft.created_by) == ("draft", AGENT, None)
    await skills.enable(ADMIN, AGENT, "expenses", enabled=True)
    assert await skills.agent_skills(TEAM_A, AGENT) == []
    assert await code_of(skills.load(TEAM_A, AGENT, "expenses")) == "skillNotFound"
    # A person edits the draft (it stays one), then saves it.
    await skills.edit(
        ADMIN,
        "expenses",
        {"SKILL.md": skill_md("expenses", "File expenses.", "1. Open the form.\n2. Check.")},
        [],
    )
    assert (await skills.list_skills(TEAM_A))[0][0].state == "draft"
    saved = await skills.save_draft(ADMIN, "expenses")
    assert (saved.state, saved.version) == ("saved", 2)
    assert await skills.agent_skills(TEAM_A, AGENT) == [
        EnabledSkill(saved.id, "expenses", "File expenses.")
    ]
    assert (await skills.load(TEAM_A, AGENT, "expenses"))[0] == "1. Open the form.\n2. Check.\n"
    assert await code_of(skills.save_draft(ADMIN, "expenses")) == "skillNotDraft"
    assert await code_of(skills.discard_draft(ADMIN, "expenses")) == "skillNotDraft"
    await skills.propose(TEAM_A, AGENT, None, "travel", "Book travel.", "Steps")
    await skills.discard_draft(ADMIN, "travel")
    assert [s.name for s, _ in await skills.list_skills(TEAM_A)] == ["expenses"]
    assert ("expenses", "proposed") in heard.changes()
    assert ("travel", "discarded") in heard.changes()


async def test_deleting_a_skill_or_an_agent_takes_it_from_agents(skills: SkillService) -> None:
    await skills.create(ADMIN, {"SKILL.md": skill_md("expenses", "File expenses.", "Steps")})
    await skills.create(ADMIN, {"SKILL.md": skill_md("travel", "Book travel.", "Steps")})
    for agent in (AGENT, OTHER_AGENT):
        await skills.enable(ADMIN, agent, "expenses", enabled=True)
        await skills.enable(ADMIN, agent, "travel", enabled=True)
    assert {s.name: a for s, a in await skills.list_skills(TEAM_A)}["travel"] == sorted(
        [AGENT, OTHER_AGENT]
    )
    await skills.delete(ADMIN, "expenses")
    await skills.agent_deleted(TEAM_A, OTHER_AGENT)
    assert [s.name for s in await skills.agent_skills(TEAM_A, AGENT)] == ["travel"]
    assert await skills.agent_skills(TEAM_A, OTHER_AGENT) == []
    # A new skill of the deleted one's name starts a new history.
    await skills.create(ADMIN, {"SKILL.md": skill_md("expenses", "Again.", "Steps")})
    assert [v.version for v in (await skills.versions(TEAM_A, "expenses"))[1]] == [1]


async def test_an_upload_arrives_in_chunks_and_is_checked_whole(skills: SkillService) -> None:
    from server.host.services.skill_archive import write_skill_archive

    files = {"SKILL.md": skill_md("expenses", "File expenses.", "Steps"), "a.md": b"A"}
    data = write_skill_archive("expenses", files)
    upload = skills.start_upload(ADMIN, len(data))
    assert skills.upload_chunk(ADMIN, upload.id, 0, data[:10]) == 10
    with pytest.raises(CrewhostError) as caught:
        skills.upload_chunk(ADMIN, upload.id, 5, data[10:])
    assert caught.value.code == "skillUploadInvalid"
    with pytest.raises(CrewhostError) as caught:
        skills.upload_chunk(OUTSIDER, upload.id, 10, data[10:])
    assert caught.value.code == "skillUploadNotFound"
    skills.upload_chunk(ADMIN, upload.id, 10, data[10:])
    skill = await skills.finish_upload(ADMIN, upload.id, replace=False)
    assert (skill.name, skill.version) == ("expenses", 1)
    assert await skills.export_archive(TEAM_A, "expenses") == data
    # The same name again: refused, unless it is to replace the skill (a new version).
    assert await code_of(skills.import_archive(ADMIN, data, replace=False)) == "skillNameTaken"
    replaced = await skills.import_archive(ADMIN, data, replace=True)
    assert replaced.version == 2
    assert (await skills.versions(TEAM_A, "expenses"))[1][0].change == "uploaded"


async def test_saves_at_once_each_land_on_top_of_the_one_before(skills: SkillService) -> None:
    first = {"SKILL.md": skill_md("expenses", "File expenses.", "Steps")}
    await skills.create(ADMIN, first)
    await asyncio.gather(
        skills.edit(ADMIN, "expenses", {"a.md": b"A"}, []),
        skills.edit(ADMIN, "expenses", {"b.md": b"B"}, []),
    )
    newest = await skills.get_skill(TEAM_A, "expenses")
    assert (newest.version, sorted(newest.files)) == (3, ["SKILL.md", "a.md", "b.md"])
    # Whole folders saved at once are versions one after the other too.
    await asyncio.gather(
        skills.update(ADMIN, "expenses", first), skills.revert(ADMIN, "expenses", 2)
    )
    _skill, versions = await skills.versions(TEAM_A, "expenses")
    assert [v.version for v in versions] == [5, 4, 3, 2, 1]


def before_the_next_write(
    monkeypatch: pytest.MonkeyPatch, db: Database, step: Callable[[], Awaitable[object]]
) -> None:
    """Run ``step`` once, just before the next write begins: what another request does
    between a service's reads and its write."""
    write, pending = db.write, [step]

    @asynccontextmanager
    async def then_write() -> AsyncIterator[AsyncConnection]:
        if pending:
            await pending.pop()()
        async with write() as conn:
            yield conn

    monkeypatch.setattr(db, "write", then_write)


async def test_a_skill_deleted_and_made_again_before_an_upload_lands_gets_it_whole(
    monkeypatch: pytest.MonkeyPatch, db: Database, skills: SkillService
) -> None:
    from server.host.services.skill_archive import write_skill_archive

    await skills.create(ADMIN, {"SKILL.md": skill_md("expenses", "Old.", "Steps")})

    async def made_again() -> None:
        await skills.delete(ADMIN, "expenses")
        await skills.create(ADMIN, {"SKILL.md": skill_md("expenses", "New.", "Steps")})

    before_the_next_write(monkeypatch, db, made_again)
    uploaded = {"SKILL.md": skill_md("expenses", "Uploaded.", "Steps"), "a.md": b"A"}
    skill = await skills.import_archive(
        ADMIN, write_skill_archive("expenses", uploaded), replace=True
    )
    newest = await skills.get_skill(TEAM_A, "expenses")
    assert (skill.version, newest.version, newest.files) == (2, 2, uploaded)
    # Later saves go on from there.
    assert (await skills.edit(ADMIN, "expenses", {"b.md": b"B"}, [])).version == 3


def test_the_prompt_lists_a_hundred_skills_in_little_room() -> None:
    many = [
        EnabledSkill(f"{n}", f"skill-number-{n}", "Does a thing the team does often. " * 30)
        for n in range(100)
    ]
    block = skills_prompt(many)
    assert len(block) <= 4_500
    assert all(f"- skill-number-{n}" in block for n in range(100))
    assert skills_prompt([]) == ""
    one = skills_prompt([EnabledSkill("1", "expenses", "File expense reports.")])
    assert one.endswith("\n- expenses: File expense reports.")


def test_the_prompt_keeps_its_cap_when_long_names_leave_skills_out() -> None:
    many = [EnabledSkill(f"{n}", f"{n:03d}-" + "x" * 40, "Long.") for n in range(100)]
    block = skills_prompt(many)
    assert len(block) <= 4_500
    listed = sum(line.startswith("- 0") for line in block.splitlines())
    assert block.endswith(f"\n- and {100 - listed} more (load_skill takes any of them by name)")
