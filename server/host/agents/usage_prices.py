"""What a model request cost: a team's own price for the model when it set one, else the
price ``genai-prices`` (offline data, shipped with the package) knows for the day of the
request; None when neither knows the model. Never a guess.

Costs are USD millionths (micro-dollars), each request's rounded half to even.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

import genai_prices
import genai_prices.data_snapshot
from genai_prices.types import TieredPrices

from server.common.errors import InvalidArgument

MICROS = Decimal(1_000_000)
# The providers genai-prices knows under the same id as ours; a custom provider's models
# are priced by the team only (a name there may mean any model).
KNOWN_PROVIDERS = frozenset({"anthropic", "openai", "openrouter"})
MAX_PRICE = Decimal(1_000_000)


@dataclass(frozen=True, slots=True)
class Tokens:
    """A request's tokens: ``input`` includes cache reads and writes, ``output`` reasoning."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(frozen=True, slots=True)
class TeamPrice:
    """A team's price of a model, USD per million tokens of each kind."""

    valid_from: float
    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal

    def cost(self, tokens: Tokens) -> Decimal:
        uncached = max(0, tokens.input - tokens.cache_read - tokens.cache_write)
        return (
            uncached * self.input
            + tokens.cache_read * self.cache_read
            + tokens.cache_write * self.cache_write
            + tokens.output * self.output
        ) / MICROS


def to_micros(usd: Decimal) -> int:
    """US dollars as whole millionths, half to even."""
    return int((usd * MICROS).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def listed_cost(provider_id: str, model: str, tokens: Tokens, at: float) -> Decimal | None:
    """The cost genai-prices gives at the time ``at``; None for a model it does not know.

    Within one price tier a cost is linear in each kind of token, so the rates of a model's
    tier on a day are asked of genai-prices once (``_rates``) and each request multiplies
    them: the package's own calculation costs half a millisecond a request."""
    if provider_id not in KNOWN_PROVIDERS:
        return None
    day = datetime.fromtimestamp(at, UTC).date()
    thresholds = _thresholds(provider_id, model, day)
    if thresholds is None:
        return None
    # A tier's price applies to a request whose input is above the tier's start.
    tier = sum(1 for start in thresholds if tokens.input > start)
    size = 2 * thresholds[tier - 1] if tier else min((1000, *thresholds))
    rates = _rates(provider_id, model, day, size)
    uncached = max(0, tokens.input - tokens.cache_read - tokens.cache_write)
    return (
        uncached * rates.input
        + tokens.cache_read * rates.cache_read
        + tokens.cache_write * rates.cache_write
        + tokens.output * rates.output
    )


def load_price_table() -> None:
    """Loads genai-prices' table (some 16,000 objects that live as long as the process).
    Called at start-up, before the process freezes what start-up made: loaded at the first
    request instead, every full garbage collection of the host would walk it again."""
    genai_prices.data_snapshot.get_snapshot()


def _asked(provider_id: str, model: str, day: date, usage: genai_prices.Usage) -> Decimal:
    moment = datetime.combine(day, time(12), UTC)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = genai_prices.calc_price(
            usage, model, provider_id=provider_id, genai_request_timestamp=moment
        )
    return found.total_price


@functools.lru_cache(maxsize=4096)
def _thresholds(provider_id: str, model: str, day: date) -> tuple[int, ...] | None:
    """The input token counts where the model's price tiers start that day (none: one
    price); None when genai-prices does not know the model."""
    snapshot = genai_prices.data_snapshot.get_snapshot()
    try:
        _, info = snapshot.find_provider_model(model, None, provider_id, None)
    except LookupError:
        return None
    prices = info.get_prices(datetime.combine(day, time(12), UTC))
    starts = {
        tier.start
        for value in vars(prices).values()
        if isinstance(value, TieredPrices)
        for tier in value.tiers
    }
    return tuple(sorted(starts))


@functools.lru_cache(maxsize=4096)
def _rates(provider_id: str, model: str, day: date, size: int) -> TeamPrice:
    """USD per token of each kind in the tier of requests of ``size`` input tokens (a
    round number, so each rate divides out exactly)."""

    def cost(**counts: int) -> Decimal:
        return _asked(provider_id, model, day, genai_prices.Usage(input_tokens=size, **counts))

    base = cost()
    return TeamPrice(
        valid_from=0.0,
        input=base / size,
        output=(cost(output_tokens=size) - base) / size,
        cache_read=cost(cache_read_tokens=size) / size,
        cache_write=cost(cache_write_tokens=size) / size,
    )


def price_of(text: str, field: str) -> Decimal:
    """A price a person typed (USD per million tokens), checked: ``invalidPrice``."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        value = Decimal(-1)
    if not value.is_finite() or value < 0 or value > MAX_PRICE:
        raise InvalidArgument(
            f"a price in US dollars per million tokens, from 0 to {MAX_PRICE}",
            code="invalidPrice",
            field=field,
        )
    return value
