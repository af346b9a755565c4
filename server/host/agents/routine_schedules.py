"""A routine's schedule: parsing, the next fire times and the schedule in words.

Three kinds: a five-field cron expression read in an IANA time zone, every N minutes
or hours (counted from an anchor instant, so no zone applies), and once at an instant.
Nothing fires more often than once a minute.

Cron times are wall-clock times of the zone. Across daylight-saving changes:

- a time the clock skips (spring forward) fires as many minutes past the change as it
  was past the skipped hour's start (01:30 on the day London skips 01:00-02:00 fires
  at 02:30 BST): once, never lost;
- a time the clock repeats (fall back) fires once, at its first occurrence, unless the
  hour field is a wildcard (``*/15 * * * *``): then the repeated hour's times fire in
  both passes, as intervals do.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol, TypeVar
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, croniter

from server.common.errors import InvalidArgument
from server.common.time_zones import is_time_zone

ScheduleKind = Literal["cron", "every", "once"]
T = TypeVar("T")

MIN_INTERVAL_SECONDS = 60
# The most candidates one search walks before it gives up (a 31 February never comes).
_MAX_STEPS = 2_000
_DAYS = ("Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays")
_DAY_ALIASES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
# croniter's random (R) and hashed (H) fields: their times change from one reading to the
# next, so the times shown would not be the times fired.
_RANDOM_FIELD = re.compile(r"[hr](\(\d+-\d+\))?(/\d+)?", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class Schedule:
    """One routine's schedule. ``cron`` and ``time_zone`` for ``cron``; ``every_seconds``
    and ``anchor_at`` for ``every``; ``at`` for ``once``."""

    kind: ScheduleKind
    cron: str | None = None
    time_zone: str | None = None
    every_seconds: int | None = None
    anchor_at: float | None = None
    at: float | None = None

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in _fields(self).items() if v is not None}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Schedule:
        return cls(**data)  # type: ignore[arg-type]

    def next_after(self, after: float) -> float | None:
        """The first fire time strictly after ``after``; None when none is left."""
        if self.kind == "once":
            assert self.at is not None
            return self.at if self.at > after else None
        if self.kind == "every":
            assert self.every_seconds is not None
            assert self.anchor_at is not None
            if after < self.anchor_at:
                return self.anchor_at
            steps = int((after - self.anchor_at) // self.every_seconds) + 1
            return self.anchor_at + steps * self.every_seconds
        assert self.cron is not None
        assert self.time_zone is not None
        return _next_cron(self.cron, self.time_zone, after)

    def next_times(self, after: float, count: int) -> list[float]:
        """Up to ``count`` fire times after ``after``, in order."""
        times: list[float] = []
        while len(times) < count:
            at = self.next_after(times[-1] if times else after)
            if at is None:
                break
            times.append(at)
        return times

    def words(self) -> str:
        """The schedule for a person: "Weekdays at 09:00, Europe/London"."""
        if self.kind == "once":
            assert self.at is not None
            return "Once, " + datetime.fromtimestamp(self.at, UTC).strftime(
                "%a %-d %b %Y %H:%M UTC"
            )
        if self.kind == "every":
            assert self.every_seconds is not None
            return _every_words(self.every_seconds)
        assert self.cron is not None
        assert self.time_zone is not None
        return f"{_cron_words(self.cron)}, {self.time_zone}"

    def local_time(self, at: float) -> str:
        """A fire time as a person reads it, in the schedule's zone ("Mon 7 Dec 09:00")."""
        zone = ZoneInfo(self.time_zone) if self.time_zone else UTC
        moment = datetime.fromtimestamp(at, zone)
        label = "" if self.time_zone else " UTC"
        return moment.strftime("%a %-d %b %H:%M") + label


def _fields(schedule: Schedule) -> dict[str, object]:
    return {
        "kind": schedule.kind,
        "cron": schedule.cron,
        "time_zone": schedule.time_zone,
        "every_seconds": schedule.every_seconds,
        "anchor_at": schedule.anchor_at,
        "at": schedule.at,
    }


def cron_schedule(expression: str, time_zone: str) -> Schedule:
    """A cron schedule, checked: ``invalidSchedule`` naming ``cron`` or ``timeZone`` (a
    random or hashed field too), ``scheduleTooFrequent`` for a seconds field."""
    fields = expression.split()
    if len(fields) == 6:
        raise _refused(
            "cron",
            "a schedule may fire at most once a minute: use five cron fields",
            code="scheduleTooFrequent",
        )
    if any(_RANDOM_FIELD.fullmatch(part) for field in fields for part in field.split(",")):
        raise _refused(
            "cron",
            "random (R) and hashed (H) cron fields are not supported: use numbers, ranges, "
            "lists and steps",
            code="invalidSchedule",
        )
    if len(fields) != 5 or not croniter.is_valid(" ".join(fields)):
        raise _refused(
            "cron",
            "not a cron expression of five fields (minute hour day month weekday)",
            code="invalidSchedule",
        )
    zone = _zone(time_zone)
    schedule = Schedule("cron", cron=" ".join(fields), time_zone=zone)
    # A valid expression that names no real day (30 February) never fires: refuse it.
    if schedule.next_after(datetime.now(UTC).timestamp()) is None:
        raise _refused("cron", "this cron expression never fires", code="invalidSchedule")
    return schedule


def every_schedule(seconds: int, anchor_at: float) -> Schedule:
    """Every ``seconds`` from ``anchor_at``; at least a minute."""
    if seconds < MIN_INTERVAL_SECONDS:
        raise _refused(
            "everySeconds", "a schedule may fire at most once a minute", code="scheduleTooFrequent"
        )
    return Schedule("every", every_seconds=seconds, anchor_at=anchor_at)


def once_schedule(at: float) -> Schedule:
    return Schedule("once", at=at)


def _zone(name: str) -> str:
    if not is_time_zone(name):
        raise _refused(
            "timeZone",
            f"unknown time zone {name!r}: use an IANA name such as Europe/London",
            code="invalidSchedule",
        )
    return name


@functools.lru_cache(maxsize=4096)
def _next_cron(expression: str, zone_name: str, after: float) -> float | None:
    """Walks the expression's wall-clock times in the zone from the wall time of ``after``
    and returns the first instant strictly after it (see the module's DST rules). Kept
    for a while: one pass of the scheduler asks it for many routines with one ``after``."""
    zone = ZoneInfo(zone_name)
    both_folds = expression.split()[1].startswith("*")
    # Start an hour early: the repeated hour's second pass reads earlier on the wall.
    start = datetime.fromtimestamp(after, zone).replace(tzinfo=None) - timedelta(hours=1)
    walk = croniter(expression, start)
    best: float | None = None
    horizon: datetime | None = None
    for _ in range(_MAX_STEPS):
        try:
            wall: datetime = walk.get_next(datetime)
        except CroniterBadDateError:
            break
        # Near a change, a later wall time can be an earlier instant: look two hours on.
        if horizon is not None and wall > horizon:
            break
        for instant in _instants(wall, zone, both_folds):
            if instant > after and (best is None or instant < best):
                best = instant
                horizon = wall + timedelta(hours=2)
    return best


def _instants(wall: datetime, zone: ZoneInfo, both_folds: bool) -> list[float]:
    """The instants a wall time names: one, or two in a repeated hour."""
    first = wall.replace(tzinfo=zone, fold=0).timestamp()
    second = wall.replace(tzinfo=zone, fold=1).timestamp()
    # A skipped wall time reads later with fold=0 (the offset before the change): keep that.
    if first >= second or not both_folds:
        return [first]
    return [first, second]


def _every_words(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return "Every hour" if hours == 1 else f"Every {hours} hours"
    if seconds % 60 == 0:
        minutes = seconds // 60
        return "Every minute" if minutes == 1 else f"Every {minutes} minutes"
    return f"Every {seconds} seconds"


def _cron_words(expression: str) -> str:
    minute, hour, day, month, weekday = expression.split()
    if minute.isdigit() and hour.isdigit():
        at = f"at {int(hour):02d}:{int(minute):02d}"
        if month == "*" and day == "*":
            return f"{_weekday_words(weekday)} {at}"
        if month == "*" and day.isdigit() and weekday == "*":
            return f"On day {int(day)} of each month {at}"
    if minute.isdigit() and hour == "*" and day == month == weekday == "*":
        return f"Every hour at :{int(minute):02d}"
    if day == month == weekday == "*" and hour == "*":
        if minute == "*":
            return "Every minute"
        if minute.startswith("*/") and minute[2:].isdigit():
            return f"Every {int(minute[2:])} minutes"
    return f"At cron times {expression}"


def _weekday_words(field: str) -> str:
    days = _weekday_set(field)
    if days is None:
        return f"On weekdays {field}"
    if days == set(range(7)):
        return "Every day"
    if days == {1, 2, 3, 4, 5}:
        return "Weekdays"
    if days == {0, 6}:
        return "Weekends"
    names = [_DAYS[d] for d in sorted(days)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _weekday_set(field: str) -> set[int] | None:
    """The days a weekday field names (0 Sunday … 6 Saturday); None when not a plain list."""
    if field == "*":
        return set(range(7))
    days: set[int] = set()
    for part in field.lower().split(","):
        ends = part.split("-")
        if len(ends) > 2:
            return None
        numbers = []
        for end in ends:
            if end.isdigit() and int(end) <= 7:
                numbers.append(int(end))  # 7 is Sunday too: "0-7" is every day
            elif end in _DAY_ALIASES:
                numbers.append(_DAY_ALIASES[end])
            else:
                return None
        if len(numbers) == 2:
            low, high = numbers
            if low > high:
                return None
            days.update(day % 7 for day in range(low, high + 1))
        else:
            days.add(numbers[0] % 7)
    return days


def schedule_from(
    kind: ScheduleKind,
    *,
    cron: str | None,
    time_zone: str | None,
    every_seconds: int | None,
    at: float | None,
    now: float,
) -> Schedule:
    """A schedule from what a person sent: each kind needs its own fields
    (``invalidSchedule`` names the missing one); an interval counts from ``now``."""
    if kind == "cron":
        return cron_schedule(_needed(cron, "cron"), _needed(time_zone, "timeZone"))
    if kind == "every":
        return every_schedule(_needed(every_seconds, "everySeconds"), now)
    return once_schedule(_needed(at, "at"))


class ScheduleFields(Protocol):
    """What a person or a file gives for a schedule (a route's args, a template's routine)."""

    @property
    def kind(self) -> ScheduleKind: ...
    @property
    def cron(self) -> str | None: ...
    @property
    def time_zone(self) -> str | None: ...
    @property
    def every_seconds(self) -> int | None: ...
    @property
    def at(self) -> float | None: ...


def schedule_of(fields: ScheduleFields, now: float) -> Schedule:
    """``schedule_from`` with the fields of ``fields``."""
    return schedule_from(
        fields.kind,
        cron=fields.cron,
        time_zone=fields.time_zone,
        every_seconds=fields.every_seconds,
        at=fields.at,
        now=now,
    )


def _needed(value: T | None, field: str) -> T:
    if value is None:
        raise _refused(field, f"this kind of schedule needs {field}", code="invalidSchedule")
    return value


def _refused(field: str, message: str, *, code: str) -> InvalidArgument:
    """A refusal that names the schedule's field, as argument checks do."""
    return InvalidArgument(f"field '{field}': {message}", code=code, field=field)
