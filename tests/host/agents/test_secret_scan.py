"""The secret scanner refuses each common key shape and names the file and line; prose,
hashes and ids pass."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from server.host.agents.secret_scan import (
    MAX_FINDINGS,
    SecretsFound,
    refuse_secrets,
    scan_files,
    scan_line,
)

# Made up for these tests, in the shapes real keys take; none is a real credential.
KEYS = {
    "openai": "sk-proj-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY",
    "anthropic": "sk-ant-api03-" + "Q2w3E4r5T6y7U8i9O0pA1sD2fG3hJ4kL",
    "openrouter": "sk-or-v1-" + "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "google": "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "github": "ghp_" + "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx",
    "github fine-grained": "github_pat_" + "11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789",
    "gitlab": "glpat-" + "xYz12AbC34dEf56GhI78",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "jwt": "eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "Authorization: Bearer " + "abcdef0123456789abcdef0123",
    "labelled": 'api_key = "' + "f00dcafe-f00dcafe-f00d" + '"',
    "high entropy": "token " + "Zq8Rk2Lm9Xv4Tb7Nw1Yc6Hd3Pf5Gj0Ks",
}
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
PROSE = """# Filing expenses

Open the expense tool at https://expenses.example.com/reports/new and type the amount.
Ask the person for their password; never type one yourself. Keys live in the vault.
The API key field stays empty: the vault fills it.
Content hash: {sha}
Run id {uuid}; see annual-report-2024-final-version-with-appendix.pdf.
a_very_long_snake_case_identifier_used_by_the_script_here = 3
"""


@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
def test_each_key_shape_is_refused_naming_file_and_line(key: str) -> None:
    text = f"Be brief.\nPolite too.\nUse {key} for the report.\n"
    with pytest.raises(SecretsFound) as caught:
        refuse_secrets([("skills/expenses/SKILL.md", text.encode())])
    assert caught.value.code == "agentTemplateSecretFound"
    assert "skills/expenses/SKILL.md line 3" in caught.value.message
    assert key not in caught.value.message


def test_a_pem_private_key_is_refused_at_its_first_line() -> None:
    found = scan_files([("workspace/id_rsa", b"intro\n" + PEM.encode())])
    assert [(f.path, f.line, f.kind) for f in found] == [("workspace/id_rsa", 2, "private key")]


def test_prose_hashes_and_ids_pass() -> None:
    text = PROSE.format(sha=hashlib.sha256(b"x").hexdigest(), uuid=uuid.uuid4().hex)
    assert scan_files([("instructions.md", text.encode())]) == []
    for line in text.splitlines():
        assert scan_line(line) is None, line


def test_binary_files_are_not_read_and_findings_are_capped() -> None:
    many = "\n".join(KEYS["aws"] for _ in range(20)).encode()
    found = scan_files([("a.bin", b"\x89PNG\x00\x00\xff" + many), ("notes.md", many)])
    assert len(found) == MAX_FINDINGS
    assert {f.path for f in found} == {"notes.md"}


def test_a_key_is_found_in_utf8_utf16_and_latin1_files_but_not_in_a_binary_one() -> None:
    text = f"Caf\u00e9 notes.\nUse {KEYS['aws']} here.\n"
    forms = {
        "utf-8.md": text.encode("utf-8"),
        "utf-16-le.md": text.encode("utf-16"),  # with its byte-order mark
        "utf-16-be.md": b"\xfe\xff" + text.encode("utf-16-be"),
        "latin-1.md": text.encode("latin-1"),
    }
    binary = b"\x00\x01\x02\xe9" + text.encode("latin-1") + b"\x00"
    found = scan_files([*forms.items(), ("blob.bin", binary)])
    assert sorted((f.path, f.line) for f in found) == sorted((path, 2) for path in forms)
