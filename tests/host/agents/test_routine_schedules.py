"""Schedules: parsing and refusals, the next times, and the schedule in words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from server.common.errors import InvalidArgument
from server.host.agents.routine_schedules import (
    Schedule,
    cron_schedule,
    every_schedule,
    once_schedule,
    schedule_from,
)

# A Thursday.
NOW = datetime(2026, 12, 3, 20, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("0 9 * * 1-5", "Weekdays at 09:00, Europe/London"),
        ("30 7 * * *", "Every day at 07:30, Europe/London"),
        ("0 10 * * 0,6", "Weekends at 10:00, Europe/London"),
        ("0 9 * * 0-7", "Every day at 09:00, Europe/London"),
        ("0 9 * * 5-7", "Sundays, Fridays and Saturdays at 09:00, Europe/London"),
        ("15 8 * * mon", "Mondays at 08:15, Europe/London"),
        ("0 18 * * 1,3,5", "Mondays, Wednesdays and Fridays at 18:00, Europe/London"),
        ("0 6 1 * *", "On day 1 of each month at 06:00, Europe/London"),
        ("5 * * * *", "Every hour at :05, Europe/London"),
        ("*/15 * * * *", "Every 15 minutes, Europe/London"),
        ("* * * * *", "Every minute, Europe/London"),
        ("0 9 1 1 *", "At cron times 0 9 1 1 *, Europe/London"),
    ],
)
def test_a_cron_schedule_in_words(cron: str, words: str) -> None:
    assert cron_schedule(cron, "Europe/London").words() == words


def test_the_next_three_times_in_the_schedule_zone() -> None:
    schedule = cron_schedule("0 9 * * 1-5", "Europe/London")
    times = schedule.next_times(NOW, 3)
    assert [schedule.local_time(t) for t in times] == [
        "Fri 4 Dec 09:00",
        "Mon 7 Dec 09:00",
        "Tue 8 Dec 09:00",
    ]
    new_york = cron_schedule("0 9 * * *", "America/New_York")
    assert datetime.fromtimestamp(new_york.next_after(NOW) or 0, UTC).hour == 14


def test_intervals_and_once() -> None:
    every = every_schedule(5400, NOW)
    assert every.words() == "Every 90 minutes"
    assert every_schedule(7200, NOW).words() == "Every 2 hours"
    assert every.next_times(NOW, 2) == [NOW + 5400, NOW + 10800]
    assert every.next_after(NOW - 10) == NOW
    once = once_schedule(NOW + 60)
    assert once.words() == "Once, Thu 3 Dec 2026 20:01 UTC"
    assert once.next_times(NOW, 3) == [NOW + 60]
    assert once.next_after(NOW + 60) is None
    assert once.local_time(NOW + 60) == "Thu 3 Dec 20:01 UTC"


def test_a_schedule_round_trips_through_its_json() -> None:
    for schedule in (
        cron_schedule("0 9 * * 1-5", "Europe/London"),
        every_schedule(600, NOW),
        once_schedule(NOW),
    ):
        assert Schedule.from_json(schedule.to_json()) == schedule


@pytest.mark.parametrize(
    ("kind", "fields", "code", "field"),
    [
        ("cron", {"cron": "61 * * * *", "time_zone": "UTC"}, "invalidSchedule", "cron"),
        ("cron", {"cron": "0 9 * *", "time_zone": "UTC"}, "invalidSchedule", "cron"),
        ("cron", {"cron": "0 9 31 2 *", "time_zone": "UTC"}, "invalidSchedule", "cron"),
        (
            "cron",
            {"cron": "0 9 * * *", "time_zone": "Europe/Nowhere"},
            "invalidSchedule",
            "timeZone",
        ),
        (
            "cron",
            {"cron": "0 9 * * *", "time_zone": "../etc/passwd"},
            "invalidSchedule",
            "timeZone",
        ),
        ("cron", {"cron": "0 9 * * *", "time_zone": "Europe"}, "invalidSchedule", "timeZone"),
        ("cron", {"cron": "0 9 * * *", "time_zone": "Factory"}, "invalidSchedule", "timeZone"),
        ("cron", {"time_zone": "UTC"}, "invalidSchedule", "cron"),
        ("cron", {"cron": "0 9 * * *"}, "invalidSchedule", "timeZone"),
        ("every", {}, "invalidSchedule", "everySeconds"),
        ("once", {}, "invalidSchedule", "at"),
        ("cron", {"cron": "* * * * * *", "time_zone": "UTC"}, "scheduleTooFrequent", "cron"),
        ("every", {"every_seconds": 59}, "scheduleTooFrequent", "everySeconds"),
    ],
)
def test_bad_schedules_name_their_field(
    kind: str, fields: dict[str, object], code: str, field: str
) -> None:
    given: dict[str, object] = {"cron": None, "time_zone": None, "every_seconds": None, "at": None}
    given.update(fields)
    with pytest.raises(InvalidArgument) as refused:
        schedule_from(kind, now=NOW, **given)  # type: ignore[arg-type]
    assert (refused.value.code, refused.value.field) == (code, field)
    assert refused.value.message.startswith(f"field '{field}': ")


@pytest.mark.parametrize("cron", ["R R * * *", "0 r(8-10) * * 1-5", "R/5 * * * *", "0 9 * * R"])
def test_a_random_cron_field_is_refused(cron: str) -> None:
    # Its times would change between the preview and the firing.
    with pytest.raises(InvalidArgument) as refused:
        cron_schedule(cron, "UTC")
    assert (refused.value.code, refused.value.field) == ("invalidSchedule", "cron")
    assert "random (R)" in refused.value.message


def test_named_months_and_days_are_not_random_fields() -> None:
    schedule = cron_schedule("0 9 * mar thu,fri", "UTC")
    assert schedule.next_times(NOW, 2) == schedule.next_times(NOW, 2)


def test_once_a_minute_is_allowed() -> None:
    assert every_schedule(60, NOW).next_after(NOW) == NOW + 60
    assert cron_schedule("* * * * *", "UTC").next_after(NOW) == NOW + 60
