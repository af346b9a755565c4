"""The little of SDP that authentication needs: the DTLS certificate fingerprint."""

from __future__ import annotations

import re

from server.common.errors import InvalidArgument

_FINGERPRINT = re.compile(r"^a=fingerprint:sha-256 ([0-9A-Fa-f:]{95})\s*$", re.MULTILINE)
FINGERPRINT_PATTERN = r"^([0-9A-F]{2}:){31}[0-9A-F]{2}$"


def normalise_fingerprint(value: str) -> str:
    return value.strip().upper()


def sdp_fingerprint(sdp: str) -> str:
    """The one sha-256 fingerprint of an SDP; refused if there is none or several differ."""
    found = {normalise_fingerprint(m) for m in _FINGERPRINT.findall(sdp)}
    if len(found) != 1:
        raise InvalidArgument(
            "the SDP must carry exactly one sha-256 certificate fingerprint", field="sdp"
        )
    return found.pop()
