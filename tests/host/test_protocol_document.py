"""The host protocol document the web client's types are generated from."""

from __future__ import annotations

import json
from pathlib import Path

from peer.connection import ticket_nonce
from server.common.keys import verify_signature
from server.common.protocol.signaling import answer_proof
from server.host.protocol_document import host_protocol_document
from server.host.routes.tables import ROUTE_TABLES

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_document_is_the_generated_one() -> None:
    committed = json.loads((ROOT / "web/src/host/protocol.json").read_text(encoding="utf-8"))
    assert committed == host_protocol_document(), (
        "run: crewhost admin host-protocol > web/src/host/protocol.json && npm run gen:host"
    )


def test_every_route_has_its_args_and_result_and_the_view_messages_are_there() -> None:
    document = host_protocol_document()
    names = [route.name for table in ROUTE_TABLES for route in table.routes]
    assert sorted(document["paths"]) == sorted(f"/{name}" for name in names)
    schemas = document["components"]["schemas"]
    pointer = schemas["Pointer"]
    assert pointer["additionalProperties"] is False
    assert set(pointer["required"]) == {"type", "action", "x", "y"}
    # What the host sends always carries its type, so the client can narrow on it.
    for sent in ("Opened", "Held", "Cursor", "ContextMenu", "Copied", "Closed", "ViewError"):
        assert "type" in schemas[sent]["required"], sent
    kinds = {ref["$ref"].rsplit("/", 1)[-1] for ref in schemas["ViewMessage"]["oneOf"]}
    assert {
        "Take",
        "Release",
        "Pointer",
        "Key",
        "Text",
        "Paste",
        "Copy",
        "MenuChoice",
        "Resize",
    } == kinds
    assert document["x-constants"]["frameHeaderBytes"] == 18


def test_the_web_clients_signature_vector_is_a_real_host_signature() -> None:
    """The web client's tests check answers against this vector; it must hold here too."""
    vector = json.loads(
        (ROOT / "web/tests/fixtures/answer-signature.json").read_text(encoding="utf-8")
    )
    proof = answer_proof(vector["answerFingerprint"], vector["nonce"])
    assert verify_signature(vector["hostKey"], proof, vector["signature"])
    assert not verify_signature(vector["otherKey"], proof, vector["signature"])
    assert ticket_nonce(vector["ticket"]) == vector["nonce"]
