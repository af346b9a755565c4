"""A name resolver for tests: names answered from a table, and each question recorded."""

from __future__ import annotations

import ipaddress

from server.common.browser_address_policy import IPAddress
from server.common.public_addresses import NameNotResolved


class TableResolver:
    """Answers names from ``table`` (a name outside it does not resolve) and records them."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.asked.append(host)
        if host not in self.table:
            raise NameNotResolved(host)
        return [ipaddress.ip_address(a) for a in self.table[host]]
