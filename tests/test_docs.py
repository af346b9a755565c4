"""The README's links into docs/, and the docs pages' links to each other, all resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# [text](target): a relative Markdown link, with an optional #anchor.
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)\s#]*)(?:#([^)\s]*))?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchor_of(heading: str) -> str:
    """The anchor a heading gets on the forge that renders these pages: lower case,
    punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor_of(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+)$", text, re.MULTILINE)}


def links(page: Path) -> list[tuple[str, str | None]]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [(m.group(1), m.group(2)) for m in LINK.finditer(text)]


def broken_links(page: Path) -> list[str]:
    """Each relative link of ``page`` that names a missing file or a missing heading."""
    broken = []
    for target, anchor in links(page):
        path = (page.parent / target).resolve() if target else page
        if not path.is_file():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}#{anchor}: no such heading")
    return broken


def test_the_readme_links_every_docs_page() -> None:
    linked = {target for target, _ in links(ROOT / "README.md") if target.startswith("docs/")}
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md")}
    assert pages, "docs/ has no pages"
    assert pages <= linked, f"README.md does not link {sorted(pages - linked)}"


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda page: page.name
)
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == [], f"broken links in {page.relative_to(ROOT)}"
