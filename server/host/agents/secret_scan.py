"""Finds key-like text in files that are about to leave the host (an agent template), so
that a provider key, an access token or a private key pasted into instructions, a skill, a
memory or a workspace file is refused rather than exported.

The shapes: vendor API keys (``sk-…``, ``sk-ant-…``, ``AIza…``, Stripe ``sk_live_…``),
cloud access key ids (``AKIA…``, ``ASIA…``), source-forge tokens (``ghp_…``,
``github_pat_…``, ``glpat-…``), chat tokens (``xoxb-…``), PEM private keys, JSON web
tokens, a value after a key-like label (``api_key = "…"``, ``Authorization: Bearer …``),
and long high-entropy runs of letters and digits. Hashes written in hexadecimal
(content hashes, ids) are not high-entropy by this measure and pass.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from server.common.errors import InvalidArgument

# The most places one refusal names; the scan stops there.
MAX_FINDINGS = 5
# A run of this many token characters or more is judged by its entropy.
MIN_TOKEN_CHARS = 32
# Bits per character above which a long run reads as random (hexadecimal tops out at 4).
MIN_TOKEN_ENTROPY = 4.3

_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("API key (sk-)", re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}")),
    ("API key (sk_live/sk_test)", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("cloud access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    (
        "bearer token",
        re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=+/~]{20,}"),
    ),
    (
        "labelled secret",
        re.compile(
            r"(?i)\b(?:api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|"
            r"client[_-]?secret|password)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9_\-+/=.~]{16,}"
        ),
    ),
)
_TOKEN_RUN = re.compile(rf"[A-Za-z0-9_\-+=]{{{MIN_TOKEN_CHARS},}}")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """Where key-like text sits: a file, a line (from 1) and what it looks like. The text
    itself is never kept."""

    path: str
    line: int
    kind: str

    def where(self) -> str:
        return f"{self.path} line {self.line}"


class SecretsFound(InvalidArgument):
    """Text to be exported holds something key-like; the message names each place."""

    code = "agentTemplateSecretFound"

    def __init__(self, findings: list[SecretFinding]) -> None:
        places = "; ".join(f"{f.where()} ({f.kind})" for f in findings)
        super().__init__(
            f"key-like text found at {places}: remove it (keep secrets in the vault) and try again",
            field=findings[0].path if findings else None,
        )
        self.findings = findings


def _entropy(run: str) -> float:
    counts = Counter(run)
    return -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())


def _random_run(run: str) -> bool:
    """A long run mixing digits, lower and upper case with high entropy per character."""
    return (
        any(c.isdigit() for c in run)
        and any(c.islower() for c in run)
        and any(c.isupper() for c in run)
        and _entropy(run) >= MIN_TOKEN_ENTROPY
    )


def scan_line(line: str) -> str | None:
    """What kind of key the line holds, or None."""
    for kind, shape in _SHAPES:
        if shape.search(line):
            return kind
    if any(_random_run(m.group(0)) for m in _TOKEN_RUN.finditer(line)):
        return "high-entropy token"
    return None


def scan_text(path: str, text: str) -> list[SecretFinding]:
    """Every line of ``text`` (the file ``path``) that holds key-like text."""
    found: list[SecretFinding] = []
    for number, line in enumerate(text.splitlines(), start=1):
        kind = scan_line(line)
        if kind is not None:
            found.append(SecretFinding(path, number, kind))
            if len(found) >= MAX_FINDINGS:
                break
    return found


def _text_of(data: bytes) -> str | None:
    """The file as text: UTF-16 after its byte-order mark, else UTF-8, else Latin-1 when
    it holds no NUL byte; None for a binary file."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            # A BOM-like start with an odd tail: read what the bytes spell.
            return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if b"\x00" in data:
        return None
    return data.decode("latin-1")


def scan_files(files: Iterable[tuple[str, bytes]]) -> list[SecretFinding]:
    """The key-like places of the text files among ``files`` (UTF-8, UTF-16 with its
    byte-order mark, or Latin-1; binary files, with NUL bytes, are not read), at most
    ``MAX_FINDINGS``."""
    found: list[SecretFinding] = []
    for path, data in files:
        text = _text_of(data)
        if text is None:
            continue
        found.extend(scan_text(path, text))
        if len(found) >= MAX_FINDINGS:
            return found[:MAX_FINDINGS]
    return found


def refuse_secrets(files: Iterable[tuple[str, bytes]]) -> None:
    """Refuse (``agentTemplateSecretFound``, naming file and line) when any text file holds
    something key-like."""
    found = scan_files(files)
    if found:
        raise SecretsFound(found)
