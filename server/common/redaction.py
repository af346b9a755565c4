"""Blanks what looks like a secret in text a model reads in the background.

Vault values and ``submit_secret`` never reach a thread; this catches what a person
or a page put in plain text anyway: a card number, or the value after a password-like
label (``password: hunter2``, ``pin=1234``, ``"api_key": "..."``).
"""

from __future__ import annotations

import re

CARD = "[card number]"
HIDDEN = "[redacted]"

# 13 to 19 digits, optionally grouped by single spaces or dashes.
_CARD_CANDIDATE = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_HIDDEN_LABELS = (
    r"pass(?:word|wd|code|phrase)?|pwd|pin|cvc|cvv|otp|one[- ]time code|secret|"
    r"api[_ -]?key|access[_ -]?token|token"
)
# A label, an optional closing quote, ``:``/``=``/``is``, then the value (quoted or one word).
_SECRET_VALUE = re.compile(
    rf"(?i)\b((?:{_HIDDEN_LABELS})[\"']?\s*(?:[:=]|\bis\b)\s*)(\"[^\"]*\"|'[^']*'|[^\s,;]+)"
)


def redact(text: str) -> str:
    """``text`` with card numbers and the values of password-like fields blanked."""
    text = _CARD_CANDIDATE.sub(_card, text)
    return _SECRET_VALUE.sub(lambda found: found.group(1) + HIDDEN, text)


def _card(found: re.Match[str]) -> str:
    digits = [int(c) for c in found.group(0) if c.isdigit()]
    return CARD if _luhn(digits) else found.group(0)


def _luhn(digits: list[int]) -> bool:
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0
