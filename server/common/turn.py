"""The ICE servers a peer connection uses, with TURN credentials made per use.

With ``rtc.turn_secret`` set (the TURN server's shared secret, coturn's
``static-auth-secret``), every TURN server that has no fixed user name gets a
credential of its own for each caller: the user name is ``<expiry>:<who>`` and
the password the base64 HMAC-SHA1 of that name under the secret, valid for
``rtc.turn_credential_seconds``. The secret itself never leaves the process.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from typing import Protocol

from pydantic import SecretStr

from server.common.protocol.signaling import IceServerView


class IceServerSetting(Protocol):
    """One configured STUN or TURN server (``rtc.ice_servers`` in the settings)."""

    @property
    def urls(self) -> list[str]: ...
    @property
    def username(self) -> str | None: ...
    @property
    def credential(self) -> str | None: ...


class IceSettings(Protocol):
    """The settings this module reads (the settings' ``rtc`` section)."""

    @property
    def ice_servers(self) -> Sequence[IceServerSetting]: ...
    @property
    def turn_secret(self) -> SecretStr | None: ...
    @property
    def turn_credential_seconds(self) -> int: ...


def _is_turn(server: IceServerSetting) -> bool:
    return any(url.startswith(("turn:", "turns:")) for url in server.urls)


def turn_credential(secret: str, who: str, expires_at: int) -> tuple[str, str]:
    """A user name and password the TURN server accepts until ``expires_at``."""
    username = f"{expires_at}:{who}"
    digest = hmac.new(secret.encode(), username.encode(), hashlib.sha1).digest()
    return username, base64.b64encode(digest).decode("ascii")


def ice_servers_for(rtc: IceSettings, who: str, now: float) -> list[IceServerView]:
    """The configured servers, each TURN server without a fixed user given a fresh credential."""
    secret = rtc.turn_secret.get_secret_value() if rtc.turn_secret is not None else None
    servers = []
    for server in rtc.ice_servers:
        username, credential = server.username, server.credential
        if secret and _is_turn(server) and username is None:
            username, credential = turn_credential(
                secret, who, int(now) + rtc.turn_credential_seconds
            )
        servers.append(IceServerView(urls=server.urls, username=username, credential=credential))
    return servers
