"""Every error code the server raises is declared, and where a client can meet it."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import server
from server.common.error_codes import (
    ADMIN_ERROR_CODES,
    ALL_ERROR_CODES,
    CONNECTION_ERROR_CODES,
    HOST_ANSWERS,
    HUB_ANSWERS,
    REVOCATION_CODES,
    ErrorCode,
)
from server.common.errors import CrewhostError
from server.host.protocol_document import host_protocol_document
from server.hub.app import openapi_document

ROOT = Path(__file__).resolve().parents[2]

# Where a code is raised says who can receive it; the first matching prefix decides.
# None: nobody reads it as a refusal (a tool's failure goes to the model as its result).
WHO_RECEIVES: tuple[tuple[str, tuple[ErrorCode, ...] | None], ...] = (
    ("server/host/tools/", None),
    # The hierarchy's classes: each is raised by the hub, a host or both.
    ("server/common/errors.py", HUB_ANSWERS + HOST_ANSWERS),
    ("server/common/crypto/", ADMIN_ERROR_CODES),
    ("server/host/services/keys.py", ADMIN_ERROR_CODES),
    ("server/common/tickets.py", CONNECTION_ERROR_CODES),
    ("server/host/rtc/peers.py", CONNECTION_ERROR_CODES),
    ("server/host/rtc/revocations.py", CONNECTION_ERROR_CODES),
    # The hub-host link: both ends read it, neither passes it on to a person.
    ("server/common/protocol/link.py", HUB_ANSWERS + HOST_ANSWERS),
    # The hub names why access ended; the hosts pass it on in their ``revoked`` event.
    ("server/hub/services/access_changes.py", REVOCATION_CODES),
    ("server/hub/services/peer_checks.py", REVOCATION_CODES),
    ("server/hub/", HUB_ANSWERS),
    ("server/host/", HOST_ANSWERS),
    ("server/common/protocol/view.py", HOST_ANSWERS),
    ("server/common/protocol/team_api.py", HOST_ANSWERS),
    ("server/common/browser_address_policy.py", HOST_ANSWERS),
    # Start-up, settings and shared helpers: declared for someone, at least.
    ("server/", HUB_ANSWERS + HOST_ANSWERS + ADMIN_ERROR_CODES),
)


def _receivers(path: str) -> tuple[ErrorCode, ...] | None:
    for prefix, codes in WHO_RECEIVES:
        if path.startswith(prefix):
            return codes
    raise AssertionError(f"{path} raises error codes: say who receives them in WHO_RECEIVES")


def _error_classes() -> dict[str, str]:
    """Every class of the error hierarchy (all of ``server`` imported) by name, with its code."""
    for module in pkgutil.walk_packages(server.__path__, "server."):
        importlib.import_module(module.name)
    classes: dict[str, str] = {}
    pending: list[type[CrewhostError]] = [CrewhostError]
    while pending:
        error = pending.pop()
        pending += error.__subclasses__()
        classes[error.__name__] = error.code
    return classes


ERROR_CLASSES = _error_classes()


def _literal_codes(path: Path) -> Iterator[tuple[int, str]]:
    """Codes written as ``code="..."`` (or a module constant) in a call, assigned to an
    error's ``.code``, a message field ``code``'s default, the values of a ``*ERROR_CODES``
    table (the codes a turn ends with), or the class's own when an error class is called
    without one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        values: list[ast.expr] = []
        if isinstance(node, ast.Call):
            values = [kw.value for kw in node.keywords if kw.arg == "code"]
            called = node.func.id if isinstance(node.func, ast.Name) else None
            if not values and called in ERROR_CLASSES:
                yield node.lineno, ERROR_CLASSES[called]
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == "code" for t in node.targets
        ):
            values = [node.value]
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id.endswith("ERROR_CODES")
            and isinstance(node.value, ast.Dict)
        ):
            values = list(node.value.values)  # a table of the codes a state ends with
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "code"
            and isinstance(node.value, ast.Constant)
            and node.value.value  # a key's DOM ``code`` defaults to "", no error code
        ):
            values = [node.value]  # a message's default code: ``code: Literal[...] = "..."``
        for value in values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield value.lineno, value.value
            elif isinstance(value, ast.Name) and value.id in constants:
                yield value.lineno, constants[value.id]


def _raised() -> list[tuple[str, str]]:
    """(where, code) for every code the server's source names."""
    found = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        found += [(f"{relative}:{line}", code) for line, code in _literal_codes(path)]
    pending: list[type[CrewhostError]] = [CrewhostError]
    while pending:
        error = pending.pop()
        pending += error.__subclasses__()
        if "code" in vars(error):
            source = error.__module__.replace(".", "/") + ".py"
            found.append((f"{source} ({error.__name__})", error.code))
    return found


RAISED = _raised()


@pytest.mark.parametrize(("where", "code"), RAISED, ids=[f"{w} {c}" for w, c in RAISED])
def test_every_raised_code_is_declared_for_whoever_receives_it(where: str, code: str) -> None:
    receivers = _receivers(where)
    if receivers is None:
        return
    assert code in {entry.code for entry in receivers}, (
        f"{where} raises {code!r}: declare it in server/common/error_codes.py"
    )


def test_the_scan_finds_the_codes_it_is_meant_to() -> None:
    """A guard for the scanner itself: a keyword, a constant, an assignment and a class."""
    codes = {code for _, code in RAISED}
    assert {"tabHeld", "pageCrashed", "httpError", "addressRefused", "hostStopping"} <= codes
    assert ("server/host/rtc/team_api.py", "forbidden") in {
        (where.split(":")[0], code) for where, code in RAISED
    }


def test_codes_are_unique_camel_case_and_explained_in_a_sentence() -> None:
    groups = (HUB_ANSWERS, HOST_ANSWERS, ADMIN_ERROR_CODES)
    for group in groups:
        codes = [entry.code for entry in group]
        assert len(codes) == len(set(codes)), codes
    for entry in (*HUB_ANSWERS, *HOST_ANSWERS, *ADMIN_ERROR_CODES):
        assert re.fullmatch(r"[a-z][A-Za-z]+", entry.code), entry
        assert entry.meaning[0].isupper(), entry
        assert entry.meaning.endswith("."), entry


def test_nothing_declared_is_never_raised() -> None:
    """A code nobody raises any more is dropped from the registry, not kept as folklore."""
    assert ALL_ERROR_CODES - {code for _, code in RAISED} == set()


def test_the_hub_document_lists_what_the_hub_answers_with() -> None:
    listed = openapi_document()["x-error-codes"]
    assert [item["code"] for item in listed] == [entry.code for entry in HUB_ANSWERS]
    assert all(item["meaning"] for item in listed)


def test_the_host_protocol_document_lists_what_a_host_answers_with() -> None:
    listed = host_protocol_document()["x-error-codes"]
    assert [item["code"] for item in listed] == [entry.code for entry in HOST_ANSWERS]
    assert {"tabHeld", "tabHoldsSecret", "addressRefused", "threadNotFound"} <= {
        item["code"] for item in listed
    }
