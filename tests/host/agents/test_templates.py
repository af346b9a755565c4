"""The agent template format: written the same bytes each time and read back whole; an
archive that attacks the reader (traversal, links, too many files, a huge entry, a bomb) or
a file changed after export is refused before anything is written; a newer format version
is named."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile

import pytest

from server.common.errors import InvalidArgument
from server.host.agents.templates import (
    LIMITS,
    AgentDocument,
    TemplateMemory,
    TemplateRefused,
    content_hash,
    read_template,
    write_template,
)

SKILL = b"---\nname: expenses\ndescription: File an expense report.\n---\n\n# Steps\n"
AGENT = AgentDocument.model_validate(
    {
        "name": "Clerk",
        "provider": {"id": "anthropic", "kind": "anthropic", "name": "Anthropic"},
        "model": None,
        "permissions": {"browser-input": "ask"},
        "maxToolCalls": None,
        "skills": ["expenses"],
    }
)


def template() -> bytes:
    return write_template(
        AGENT,
        "File expenses.\n",
        {"expenses": {"SKILL.md": SKILL}},
        memories=[TemplateMemory(text="Receipts live in Drive.")],
        workspace={"notes/a.md": b"hello\n"},
        exported_at=1.0,
    )


def archive(*entries: tuple[str | zipfile.ZipInfo, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made:
        for name, data in entries:
            made.writestr(name, data)
    return out.getvalue()


def reason(data: bytes) -> str:
    with pytest.raises(TemplateRefused) as caught:
        read_template(data)
    assert caught.value.code == "agentTemplateRefused"
    return caught.value.reason


def test_a_template_reads_back_whole_and_is_the_same_bytes_each_time() -> None:
    data = template()
    assert template() == data
    got = read_template(data)
    assert got.agent == AGENT
    assert got.instructions == "File expenses.\n"
    assert got.skills == {"expenses": {"SKILL.md": SKILL}}
    assert [m.text for m in got.memories] == ["Receipts live in Drive."]
    assert got.workspace == {"notes/a.md": b"hello\n"}
    assert got.manifest.includes == {"memories": True, "workspace": True}


@pytest.mark.parametrize("name", ["../evil.md", "/etc/passwd", "workspace/../../x", "a\\b"])
def test_paths_that_climb_out_are_refused(name: str) -> None:
    assert reason(archive((name, b"x"), ("manifest.json", b"{}"))) == "badPath"


def test_a_link_entry_is_refused() -> None:
    info = zipfile.ZipInfo("workspace/link")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    assert reason(archive((info, b"/etc/passwd"))) == "link"


def test_too_many_files_are_refused_before_any_is_read() -> None:
    entries = [(f"workspace/{n}.txt", b"") for n in range(LIMITS.entries + 1)]
    assert reason(archive(*entries)) == "tooManyFiles"


def test_a_huge_entry_that_compresses_small_is_refused() -> None:
    # 100 MiB of zeros deflate to about 100 KiB.
    assert reason(archive(("workspace/zeros", bytes(100 * 1024 * 1024)))) in (
        "compressionRatio",
        "fileTooLarge",
    )


def test_a_file_changed_after_export_or_added_is_refused() -> None:
    data = template()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as made:
        for info in source.infolist():
            made.writestr(info, source.read(info))
        made.writestr("workspace/extra.md", b"added\n")
    with pytest.raises(InvalidArgument) as caught:
        read_template(out.getvalue())
    assert caught.value.code == "agentTemplateInvalid"
    assert "workspace/extra.md" in caught.value.message


def test_a_newer_format_version_is_named() -> None:
    manifest = {"format": "crewhost-agent", "formatVersion": 2}
    with pytest.raises(InvalidArgument) as caught:
        read_template(archive(("manifest.json", json.dumps(manifest).encode())))
    assert caught.value.code == "agentTemplateInvalid"
    assert "format version 2" in caught.value.message


@pytest.mark.parametrize("path", ["manifest.json", "memories.json"])
def test_json_nested_past_the_parsers_depth_is_refused_as_invalid(path: str) -> None:
    nested = b"[" * 5_000 + b"]" * 5_000  # deeper than the parser goes, small to unpack
    data = template() if path == "memories.json" else archive(("manifest.json", nested))
    if path == "memories.json":
        data = resigned(data, path, nested)
    with pytest.raises(InvalidArgument) as caught:
        read_template(data)
    assert caught.value.code == "agentTemplateInvalid"
    assert path in caught.value.message


def test_a_zip_without_a_manifest_is_not_a_template() -> None:
    with pytest.raises(InvalidArgument) as caught:
        read_template(archive(("SKILL.md", SKILL)))
    assert caught.value.code == "agentTemplateInvalid"


def resigned(data: bytes, path: str, content: bytes) -> bytes:
    """The template with one file changed and its manifest's hashes made to match, as a
    hand-edited file would be."""
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        files = {i.filename: source.read(i) for i in source.infolist()}
    files[path] = content
    manifest = json.loads(files.pop("manifest.json"))
    manifest["files"][path] = hashlib.sha256(content).hexdigest()
    manifest["contentHash"] = content_hash(manifest["files"])
    files["manifest.json"] = json.dumps(manifest).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as made:
        for name, body in files.items():
            made.writestr(name, body)
    return out.getvalue()


def with_routine(schedule: dict[str, object], message: str = "Go", *, twice: bool = False) -> str:
    routine = {"name": "Daily", "message": message, "schedule": schedule}
    return json.dumps(
        AGENT.model_dump(by_alias=True) | {"routines": [routine] * (2 if twice else 1)}
    )


@pytest.mark.parametrize(
    ("path", "content", "said"),
    [
        (
            "agent.json",
            json.dumps(AGENT.model_dump(by_alias=True) | {"permissions": {"shell": "ask"}}),
            "unknown tool families ['shell']",
        ),
        ("instructions.md", "x" * 20_001, "longer than 20000 characters"),
        ("instructions.md", "File\x00expenses.", "holds a NUL character"),
        ("workspace/notes/nul.txt", "x", "a device name"),
        # A routine the team could no longer list: its next time past any clock, or NaN.
        ("agent.json", with_routine({"kind": "every", "everySeconds": 10**40}), "less than"),
        ("agent.json", with_routine({"kind": "once", "at": float("nan")}), "finite number"),
        ("agent.json", with_routine({"kind": "every", "everySeconds": 60}, "Go\x00"), "NUL"),
        ("agent.json", with_routine({"kind": "every", "everySeconds": 60}, twice=True), "two"),
        ("memories.json", json.dumps([{"text": "Fares", "site": "x" * 3_000}]), "memories"),
        ("memories.json", json.dumps([{"text": "Fares", "site": "not a host"}]), "memories"),
    ],
)
def test_settings_a_host_would_refuse_are_refused_before_writing(
    path: str, content: str, said: str
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        read_template(resigned(template(), path, content.encode()))
    assert said in caught.value.message


def test_names_alike_but_for_their_accents_form_are_one_name() -> None:
    composed, decomposed = "workspace/caf\u00e9.txt", "workspace/cafe\u0301.txt"
    assert reason(archive((composed, b"one"), (decomposed, b"two"))) == "duplicateName"
