"""Every id format is declared once, in ``server.common.protocol.ids``, and each accepts
what the system mints and refuses the rest."""

from __future__ import annotations

import ast
import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from server.common.protocol import ids
from server.common.tokens import new_id
from server.host.browser.partitions import new_profile_id

SERVER = Path(__file__).resolve().parents[3] / "server"
IDS_MODULE = SERVER / "common" / "protocol" / "ids.py"
# A tool's arguments come from a model, which names a tab or an item loosely; the tool looks
# it up and answers "no such tab" in words the model acts on, so those fields stay unformatted.
TOOL_ARGUMENTS = SERVER / "host" / "tools"
_CONSTRAINTS = {"pattern", "min_length", "max_length"}


def _is_id_name(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "Id", "ID"))


def _declares_format(node: ast.expr | None) -> bool:
    """An annotation or default that states a string's format itself."""
    if node is None:
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in {"Annotated", "StringConstraints", "constr"}:
            return True
        if isinstance(sub, ast.Call) and any(k.arg in _CONSTRAINTS for k in sub.keywords):
            return True
    return False


def _own_id_formats(path: Path, root: Path = SERVER.parent) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if any(_is_id_name(n) for n in names) and _declares_format(node.value):
                found.append(f"{path.relative_to(root)}:{node.lineno} {names[0]}")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            if _is_id_name(name) and (
                _declares_format(node.annotation) or _declares_format(node.value)
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_no_module_declares_its_own_id_format() -> None:
    offenders = [
        hit
        for path in sorted(SERVER.rglob("*.py"))
        if path != IDS_MODULE and TOOL_ARGUMENTS not in path.parents
        for hit in _own_id_formats(path)
    ]
    assert offenders == [], "declare id formats in server/common/protocol/ids.py"


def test_the_scan_finds_a_field_with_its_own_format(tmp_path: Path) -> None:
    # The guard above is only as good as its scan: it must see the usual ways.
    module = tmp_path / "m.py"
    module.write_text(
        "AgentId = Annotated[str, StringConstraints(pattern='x')]\n"
        "class A(InboundModel):\n"
        "    item_id: Annotated[str, StringConstraints(max_length=64)]\n"
        "    host_id: str = Field(max_length=64)\n"
        "    name: Annotated[str, StringConstraints(max_length=64)]\n"
        "    other_id: str\n"
    )
    hits = _own_id_formats(module, root=tmp_path)
    assert [hit.rsplit(" ", 1)[1] for hit in hits] == ["AgentId", "item_id", "host_id"]


def _accepts(kind: Any, value: object) -> bool:
    try:
        TypeAdapter(kind).validate_python(value)
    except ValidationError:
        return False
    return True


HEX_IDS = [
    ids.TeamId,
    ids.AccountId,
    ids.HostId,
    ids.AgentId,
    ids.ThreadId,
    ids.TurnId,
    ids.MemoryId,
    ids.VaultItemId,
    ids.RecordingId,
    ids.UploadId,
    ids.RequestId,
]


@pytest.mark.parametrize("kind", HEX_IDS)
def test_a_hex_id_is_what_new_id_mints(kind: Any) -> None:
    assert _accepts(kind, new_id())
    assert _accepts(kind, uuid.uuid4().hex)
    for wrong in ("", "0" * 31, "0" * 33, "A" * 32, str(uuid.uuid4()), "../" + "0" * 29, 7):
        assert not _accepts(kind, wrong), wrong


def test_a_tab_id_is_a_uuid_in_its_usual_form() -> None:
    assert _accepts(ids.TabId, str(uuid.uuid4()))
    for wrong in ("", "tab-1", uuid.uuid4().hex, "-" * 36, str(uuid.uuid4()).upper(), "../../etc"):
        assert not _accepts(ids.TabId, wrong), wrong


def test_a_profile_id_is_what_a_new_profile_gets() -> None:
    assert _accepts(ids.ProfileId, new_profile_id())
    for wrong in ("profile-", "shared", new_id(), "proxy-" + new_id(), "profile-" + "0" * 31):
        assert not _accepts(ids.ProfileId, wrong), wrong


def test_a_proxy_id_is_its_prefix_and_hex() -> None:
    assert _accepts(ids.ProxyId, ids.PROXY_PREFIX + uuid.uuid4().hex)
    for wrong in ("proxy-", new_id(), "profile-" + new_id(), "proxy-" + "g" * 32):
        assert not _accepts(ids.ProxyId, wrong), wrong


def test_a_provider_id_is_a_builtin_name_or_a_custom_id() -> None:
    from server.host.services.providers import BUILTIN_PROVIDERS, CUSTOM_PREFIX

    for name in BUILTIN_PROVIDERS:
        assert _accepts(ids.ProviderId, name)
    assert _accepts(ids.ProviderId, CUSTOM_PREFIX + uuid.uuid4().hex)
    for wrong in ("", "Not A Provider", "-anthropic", "x" * 41, "openai/"):
        assert not _accepts(ids.ProviderId, wrong), wrong


def test_a_sub_agent_id_is_sixteen_hex() -> None:
    assert _accepts(ids.SubAgentId, uuid.uuid4().hex[:16])
    for wrong in ("", new_id(), "g" * 16):
        assert not _accepts(ids.SubAgentId, wrong), wrong


def test_ids_given_by_others_are_only_bounded() -> None:
    assert _accepts(ids.SearchEngineId, "0123456789abc:defghijk")
    assert not _accepts(ids.SearchEngineId, "x" * (ids.MAX_SEARCH_ENGINE_ID_LENGTH + 1))
    assert _accepts(ids.ApiCallId, 0)
    assert _accepts(ids.ApiCallId, "call-7")
    assert not _accepts(ids.ApiCallId, -1)
    assert not _accepts(ids.ApiCallId, "x" * 65)
