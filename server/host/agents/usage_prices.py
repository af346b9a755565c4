"""What a model request cost: a team's own price for the model when it set one, else the
price ``genai-prices`` (offline data, shipped with the package) knows for the day of the
request; None when neither knows the model. Never a guess.

Costs are USD millionths (micro-dollars), each request's rounded half to even.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

import genai_prices

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
    """The cost genai-prices gives at the time ``at``; None for a model it does not know."""
    if provider_id not in KNOWN_PROVIDERS:
        return None
    usage = genai_prices.Usage(
        input_tokens=tokens.input,
        output_tokens=tokens.output,
        cache_read_tokens=tokens.cache_read,
        cache_write_tokens=tokens.cache_write,
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = genai_prices.calc_price(
                usage,
                model,
                provider_id=provider_id,
                genai_request_timestamp=datetime.fromtimestamp(at, UTC),
            )
    except LookupError:
        return None
    return found.total_price


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
