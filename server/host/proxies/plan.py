"""What the browser needs to know to launch a partition behind its proxy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from server.host.proxies.addresses import ProxyAddress


@dataclass(frozen=True, slots=True)
class ProxyPlan:
    """A profile's proxy, password opened: an address, or a member's computer."""

    team_id: str
    proxy_id: str
    name: str
    kind: Literal["address", "computer"]
    address: ProxyAddress | None = None
    member_id: str | None = None
