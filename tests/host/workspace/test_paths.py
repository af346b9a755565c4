"""Workspace path rules: every escape and trick refused with one code, plain names kept."""

from __future__ import annotations

import unicodedata

import pytest

from server.common.errors import InvalidArgument
from server.host.workspace.paths import workspace_parts

REFUSED = [
    ("..", "parent"),
    ("../secret", "parent first"),
    ("notes/../../etc/passwd", "parent inside"),
    ("notes/./a.txt", "dot part"),
    ("/etc/passwd", "absolute"),
    ("//server/share", "absolute, two slashes"),
    ("C:/Windows/win.ini", "drive"),
    ("c:evil", "drive-relative"),
    ("~/secret", "home"),
    ("notes\\..\\secret", "backslash"),
    ("a//b", "empty part"),
    ("a\x00b", "NUL"),
    ("a\nb", "newline"),
    ("report\u202etxt.exe", "bidirectional override"),
    ("a\ud800b.txt", "lone surrogate"),
    ("CON", "device"),
    ("nul.txt", "device with an extension"),
    ("folder/com1.log", "device inside"),
    ("LPT9", "printer port"),
    ("trailing.", "trailing dot"),
    ("trailing ", "trailing space"),
    ("\uff0e\uff0e/secret", "fullwidth dots"),
    ("a\uff0fb", "fullwidth slash"),
    ("a\u2215b", "division slash"),
    ("\u2024\u2024", "one-dot leaders"),
    ("a" * 256, "part over 255 bytes"),
    ("é" * 128, "part over 255 bytes in UTF-8"),
    ("/".join(["a"] * 600), "path over 1,024 characters"),
    (".crewhost-abc", "reserved name"),
    ("", "empty"),
]


@pytest.mark.parametrize(("path", "why"), REFUSED, ids=[why for _, why in REFUSED])
def test_refused(path: str, why: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        workspace_parts(path)
    assert caught.value.code == "workspacePathInvalid", why


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("notes.md", ("notes.md",)),
        ("notes/prices.md", ("notes", "prices.md")),
        ("folder/", ("folder",)),
        (".hidden", (".hidden",)),
        ("a..b", ("a..b",)),
        ("console.txt", ("console.txt",)),
        ("Übersicht 2026.csv", ("Übersicht 2026.csv",)),
        ("a" * 255, ("a" * 255,)),
    ],
)
def test_kept(path: str, parts: tuple[str, ...]) -> None:
    assert workspace_parts(path) == parts


def test_composed_and_decomposed_names_are_one_file() -> None:
    decomposed = unicodedata.normalize("NFD", "café.txt")
    assert decomposed != "café.txt"
    assert workspace_parts(decomposed) == workspace_parts("café.txt")


def test_the_root_only_where_a_folder_is_asked_for() -> None:
    assert workspace_parts("", allow_root=True) == ()
    with pytest.raises(InvalidArgument):
        workspace_parts("/", allow_root=True)
