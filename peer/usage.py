"""``crewhost-peer usage``: what the team's model requests used and cost, as a table or CSV.

Owners and admins see the team's use; a member sees their own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from peer.connection import HostConnection

GROUPS = ("agent", "member", "provider", "model", "routine", "day")


def add_usage_parser(commands: Any) -> argparse.ArgumentParser:
    """The ``usage`` command (it takes --team and --host like the others)."""
    usage: argparse.ArgumentParser = commands.add_parser(
        "usage",
        help="tokens and cost of the team's model requests",
        description="Tokens and cost of the team's model requests over a range of days in "
        "the team's time zone (this month by default), grouped by any of agent, member, "
        "provider, model, routine and day. Owners and admins see the team's use; a member "
        "sees their own. A model with no price shows its tokens and 'no price'.",
    )
    usage.add_argument(
        "--by",
        action="append",
        choices=GROUPS,
        default=[],
        help="group by this; repeatable (none: one line for the range)",
    )
    usage.add_argument("--from", dest="from_day", metavar="D", help="first day, YYYY-MM-DD")
    usage.add_argument("--to", dest="to_day", metavar="D", help="last day, YYYY-MM-DD")
    usage.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    return usage


async def usage_command(
    connection: HostConnection,
    args: argparse.Namespace,
    table: Callable[[Sequence[str], Sequence[Sequence[str]]], None],
) -> int:
    """Print the summary; its exit status."""
    query: dict[str, Any] = {"by": list(dict.fromkeys(args.by))}
    if args.from_day:
        query["from"] = args.from_day
    if args.to_day:
        query["to"] = args.to_day
    if args.csv:
        exported = await connection.call("usage-v1/csv", query)
        sys.stdout.write(exported["csv"])
        return 0
    summary = await connection.call("usage-v1/summary", query)
    by = summary["by"]
    currency = summary["currency"]
    rows = [
        [
            *(row["key"][name] or "-" for name in by),
            str(row["requests"]),
            str(row["inputTokens"]),
            str(row["outputTokens"]),
            str(row["cacheReadTokens"]),
            str(row["cacheWriteTokens"]),
            str(row["reasoningTokens"]),
            _cost(row, currency),
        ]
        for row in summary["rows"]
    ]
    print(f"{summary['from']} to {summary['to']} ({summary['timeZone']})")
    header = [name.upper() for name in by]
    table(
        [*header, "REQUESTS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REASONING", "COST"],
        rows,
    )
    return 0


def _cost(row: dict[str, Any], currency: str) -> str:
    if row["cost"] is None:
        return "no price"
    unpriced = row["unpricedRequests"]
    more = f" (+{unpriced} without a price)" if unpriced else ""
    return f"{row['cost']} {currency}{more}"
