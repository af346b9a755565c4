"""A skill's ``.zip`` is checked whole before anything is written: each attack an archive can
carry is refused with ``skillArchiveRefused`` naming its reason, front matter that breaks
the format with ``skillInvalid``; an exported skill reads back as the same files."""

from __future__ import annotations

import io
import random
import stat
import warnings
import zipfile

import pytest

from server.common.errors import InvalidArgument
from server.host.services.skill_archive import (
    MAX_ARCHIVE_BYTES,
    SkillArchiveRefused,
    read_skill_archive,
    write_skill_archive,
)
from server.host.services.skill_format import (
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    MAX_PATH_CHARS,
    check_files,
    check_name,
    parse_skill_md,
    skill_md,
)

SKILL = b"---\nname: expenses\ndescription: File an expense report.\n---\n\n# Steps\n1. Open it.\n"


def archive(*entries: tuple[str | zipfile.ZipInfo, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a duplicate name is what some tests mean to write
        for name, data in entries:
            made.writestr(name, data)
    return out.getvalue()


def entry(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # Unix: the mode bits are read
    info.external_attr = mode << 16
    return info


def refused(data: bytes) -> str:
    with pytest.raises(SkillArchiveRefused) as caught:
        read_skill_archive(data)
    assert caught.value.code == "skillArchiveRefused"
    assert f"({caught.value.reason})" in caught.value.message
    return caught.value.reason


def test_a_folder_named_after_the_skill_or_the_root_reads_as_its_files() -> None:
    for prefix in ("expenses/", ""):
        document, files = read_skill_archive(
            archive(
                (f"{prefix}SKILL.md", SKILL),
                (f"{prefix}references/policy.md", b"Receipts over 50 EUR."),
                ("__MACOSX/._SKILL.md", b"junk"),
            )
        )
        assert document.front.name == "expenses"
        assert document.front.description == "File an expense report."
        assert document.body.startswith("# Steps")
        assert files == {"SKILL.md": SKILL, "references/policy.md": b"Receipts over 50 EUR."}


def test_an_exported_skill_reads_back_the_same_and_is_the_same_bytes_each_time() -> None:
    files = {"SKILL.md": SKILL, "scripts/total.js": b"return 1 + 1;", "logo.png": b"\x89PNG\x00"}
    data = write_skill_archive("expenses", files)
    assert data == write_skill_archive("expenses", dict(reversed(files.items())))
    with zipfile.ZipFile(io.BytesIO(data)) as read:
        assert sorted(read.namelist()) == [
            "expenses/SKILL.md",
            "expenses/logo.png",
            "expenses/scripts/total.js",
        ]
    assert read_skill_archive(data)[1] == files


def test_a_skill_of_the_longest_name_and_path_reads_back() -> None:
    name, path = "e" * MAX_NAME_CHARS, "/".join(["d" * 31] * 7 + ["f" * 31])
    assert len(path) == MAX_PATH_CHARS
    files = {"SKILL.md": skill_md(name, "File an expense report.", "Steps").encode(), path: b"x"}
    document, read = read_skill_archive(write_skill_archive(name, files))
    assert (document.front.name, read) == (name, files)
    # At the root, with no folder, a path is held to the skill's own limit.
    long = ("f" * (MAX_PATH_CHARS + 1), b"x")
    with pytest.raises(InvalidArgument) as caught:
        read_skill_archive(archive(("SKILL.md", files["SKILL.md"]), long))
    assert (caught.value.code, caught.value.field) == ("skillInvalid", "path")


@pytest.mark.parametrize("path", [".DS_Store", "docs/Thumbs.db", "__MACOSX/._SKILL.md"])
def test_a_skill_holds_no_file_that_reading_its_zip_would_skip(path: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        check_files({"SKILL.md": SKILL, path: b"x"})
    assert (caught.value.code, caught.value.field) == ("skillInvalid", "path")


@pytest.mark.parametrize(
    "name",
    [
        "../SKILL.md",
        "expenses/../../etc/passwd",
        "/etc/passwd",
        "expenses\\..\\SKILL.md",
        "C:/Windows/win.ini",
        "expenses/./SKILL.md",
        "expenses//SKILL.md",
        "expenses/a\x01b",
    ],
)
def test_paths_that_climb_out_or_are_not_plain_are_refused(name: str) -> None:
    assert refused(archive(("expenses/SKILL.md", SKILL), (name, b"x"))) == "badPath"


def test_a_symbolic_link_entry_is_refused() -> None:
    link = entry("expenses/policy.md", stat.S_IFLNK | 0o777)
    assert refused(archive(("expenses/SKILL.md", SKILL), (link, b"/etc/passwd"))) == "link"


@pytest.mark.parametrize("kind", [stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK])
def test_special_entries_are_refused(kind: int) -> None:
    special = entry("expenses/device", kind | 0o644)
    assert refused(archive(("expenses/SKILL.md", SKILL), (special, b""))) == "specialEntry"


def test_ten_thousand_files_are_refused_before_any_is_read() -> None:
    entries = [(f"expenses/f{n}.txt", b"") for n in range(10_000)]
    assert refused(archive(("expenses/SKILL.md", SKILL), *entries)) == "tooManyFiles"


def test_a_one_gigabyte_entry_that_compresses_to_a_megabyte_is_refused() -> None:
    out = io.BytesIO()
    block = bytes(1 << 20)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as made:
        made.writestr("expenses/SKILL.md", SKILL)
        # Streamed into the archive in memory: a gigabyte never sits anywhere whole.
        with made.open("expenses/zeros.txt", "w", force_zip64=True) as zeros:
            for _ in range(1024):
                zeros.write(block)
    data = out.getvalue()
    assert len(data) < MAX_ARCHIVE_BYTES  # past the archive's own size check
    assert refused(data) == "compressionRatio"


def test_an_entry_larger_than_a_file_may_be_is_refused() -> None:
    noise = random.Random(7).randbytes(600_000)  # deflates to about its own size
    assert refused(archive(("expenses/SKILL.md", SKILL), ("expenses/big.bin", noise))) == (
        "fileTooLarge"
    )


def test_duplicate_names_and_bad_layouts_are_refused() -> None:
    assert refused(archive(("expenses/SKILL.md", SKILL), ("expenses/SKILL.md", SKILL))) == (
        "duplicateName"
    )
    assert refused(archive(("a/SKILL.md", SKILL), ("b/notes.md", b"x"))) == "layout"
    assert refused(archive(("expenses/notes.md", b"no SKILL.md"))) == "layout"
    assert refused(archive(("travel/SKILL.md", SKILL))) == "folderName"
    assert refused(b"PK\x03\x04 not really a zip") == "notZip"
    assert refused(b"x" * (MAX_ARCHIVE_BYTES + 1)) == "tooLarge"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("no front matter at all", None),
        ("---\nname: [unclosed\n---\n", None),
        ("---\n- a list\n---\n", None),
        ("---\ndescription: x\n---\n", "name"),
        ("---\nname: Expenses\ndescription: x\n---\n", "name"),
        ("---\nname: -expenses\ndescription: x\n---\n", "name"),
        ("---\nname: ex--penses\ndescription: x\n---\n", "name"),
        (f"---\nname: {'a' * 65}\ndescription: x\n---\n", "name"),
        ("---\nname: expenses\n---\n", "description"),
        ("---\nname: expenses\ndescription: ''\n---\n", "description"),
        (f"---\nname: expenses\ndescription: {'d' * 1025}\n---\n", "description"),
        ("---\nname: expenses\ndescription: x\nversion: 2\n---\n", "version"),
        ("---\nname: expenses\ndescription: x\nmetadata: [1]\n---\n", "metadata"),
        ("---\nname: expenses\ndescription: x\ncompatibility: " + "c" * 501 + "\n---\n", None),
    ],
)
def test_front_matter_that_breaks_the_format_is_refused(text: str, field: str | None) -> None:
    with pytest.raises(InvalidArgument) as caught:
        read_skill_archive(archive(("expenses/SKILL.md", text.encode())))
    assert caught.value.code == "skillInvalid"
    if field is not None:
        assert caught.value.field == field


def test_optional_fields_are_read_and_any_text_round_trips_through_the_writer() -> None:
    document = parse_skill_md(
        "---\nname: pdf-forms\ndescription: >\n  Fill PDF forms.\n  Use for PDFs.\n"
        "license: Apache-2.0\ncompatibility: Needs a browser\nmetadata:\n  author: team\n"
        "  version: 1.0\nallowed-tools: snapshot click\n---\nBody\n"
    )
    front = document.front
    assert (front.description, front.license, front.allowed_tools) == (
        "Fill PDF forms. Use for PDFs.",
        "Apache-2.0",
        "snapshot click",
    )
    assert front.metadata == {"author": "team", "version": "1.0"}
    tricky = 'Use it: "quoted", #hash, --- and a: colon' + "é" * 10
    again = parse_skill_md(skill_md("tricky", tricky, "Steps"))
    assert (again.front.description, again.body) == (tricky, "Steps\n")
    assert len(tricky) < MAX_DESCRIPTION_CHARS
    assert check_name("a-1-b") == "a-1-b"
