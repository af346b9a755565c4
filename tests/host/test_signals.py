"""The host's signal hub: every subscriber hears, in order; one that fails is logged with
the signal's name and neither the publisher nor the others notice."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import pytest

from server.host.signals import Signals


@dataclass(frozen=True, slots=True)
class Rang:
    team_id: str


@dataclass(frozen=True, slots=True)
class Other:
    team_id: str


def test_subscribers_hear_their_signal_in_order() -> None:
    signals = Signals()
    heard: list[str] = []
    signals.subscribe(Rang, lambda s: heard.append(f"first {s.team_id}"))
    signals.subscribe(Rang, lambda s: heard.append(f"second {s.team_id}"))
    signals.subscribe(Other, lambda s: heard.append("other"))

    signals.publish(Rang("t1"))

    assert heard == ["first t1", "second t1"]


def test_a_failing_subscriber_is_logged_and_the_others_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signals = Signals()
    heard: list[str] = []

    def broken(_signal: Rang) -> None:
        raise RuntimeError("broken subscriber")

    signals.subscribe(Rang, lambda s: heard.append("before"))
    signals.subscribe(Rang, broken)
    signals.subscribe(Rang, lambda s: heard.append("after"))

    with caplog.at_level(logging.ERROR, logger="server.host.signals"):
        signals.publish(Rang("t1"))  # does not raise

    assert heard == ["before", "after"]
    [record] = caplog.records
    assert "Rang" in record.getMessage()
    assert record.exc_info is not None
    assert "broken subscriber" in str(record.exc_info[1])


async def test_async_subscribers_run_as_tasks_the_hub_drains_on_close(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signals = Signals()
    heard: list[str] = []
    go_on = asyncio.Event()

    async def slow(signal: Rang) -> None:
        await go_on.wait()
        heard.append(signal.team_id)

    async def broken(_signal: Rang) -> None:
        raise RuntimeError("broken later")

    signals.subscribe(Rang, slow)
    signals.subscribe(Rang, broken)
    with caplog.at_level(logging.ERROR, logger="server.host.signals"):
        signals.publish(Rang("t1"))
        assert heard == []
        go_on.set()
        await signals.close()

    assert heard == ["t1"]
    [record] = caplog.records
    assert "Rang" in record.getMessage()


async def test_delivery_awaits_each_subscriber_in_turn_past_a_failing_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signals = Signals()
    heard: list[str] = []

    async def first(signal: Rang) -> None:
        await asyncio.sleep(0)
        heard.append(f"first {signal.team_id}")

    async def broken(_signal: Rang) -> None:
        raise RuntimeError("broken in order")

    signals.subscribe(Rang, first)
    signals.subscribe(Rang, broken)
    signals.subscribe(Rang, lambda s: heard.append(f"last {s.team_id}"))
    with caplog.at_level(logging.ERROR, logger="server.host.signals"):
        await signals.deliver(Rang("t1"))
        await signals.deliver(Rang("t2"))

    assert heard == ["first t1", "last t1", "first t2", "last t2"]
    assert [r.getMessage() for r in caplog.records] == ["a subscriber to Rang failed"] * 2
