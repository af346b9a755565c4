"""Blanks what looks like a secret in text that is kept or that a model reads.

Vault values and ``submit_secret`` never reach a thread; this catches what a person,
an agent or a page put in plain text anyway: a card number, the value after a
password-like label (``password: hunter2``, ``pin=1234``, ``"api_key": "..."``,
``password Hunter2x``, ``PIN 4829``), a bearer or basic credential, a JSON web token,
the credential-like parts of a web address's path (a sign-in link's token, a reset
code), which become ``:token``, and the values of its credential-like query parameters
(``?code=…``, ``&access_token=…``).

One rule for every place: a memory is blanked when it is kept (``remember``, the
memory review, teaching) and again before it is sent to a model; browsing steps when
they are recorded; teaching files when they are written.
"""

from __future__ import annotations

import re

CARD = "[card number]"
HIDDEN = "[redacted]"
BLANKED_PATH_PART = ":token"

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
# A label and a value with only a space between (``password Hunter2x``); the value must
# look made up (see ``_looks_made_up``) and have 6 characters or more, or be 3 to 10
# digits after a PIN-like label, so that ``password reset page`` stays as it is.
_BARE_SECRET_VALUE = re.compile(
    rf"(?i)\b((?:{_HIDDEN_LABELS})[ \t]+)(?![\"']?\[redacted\])([^\s,;.!?]{{3,}})"
)
# Labels whose value is often digits alone (``PIN 4829``, ``otp 482913``).
_DIGIT_LABELS = re.compile(r"(?i)^(?:pin|otp|cvc|cvv|one[- ]time code)[ \t]+$")
# An HTTP authorization's credential, in a header written out or in running text.
_AUTHORIZATION = re.compile(r"(?i)\b(bearer|basic)([ \t]+)[A-Za-z0-9._~+/-]{8,}=*")
# Query parameters whose value is a credential (``?code=…`` of a sign-in's return).
_QUERY_SECRETS = frozenset(
    {
        "code",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth",
        "key",
        "api_key",
        "apikey",
        "password",
        "pass",
        "secret",
        "client_secret",
        "sig",
        "signature",
        "session",
        "sid",
        "otp",
    }
)
# A JSON web token: three base64url parts, the first a JSON object's ``{"``.
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_JWT_PART = re.compile(r"^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$")
# An http(s) address in running text: its path is checked part by part.
_URL = re.compile(r"(?i)\bhttps?://[^\s\"'<>]+")
_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_\-.~=]+$")
# Path parts after which a link's next part is its secret: reset and sign-in links.
_LINK_WORDS = frozenset(
    {
        "reset",
        "reset-password",
        "reset_password",
        "password-reset",
        "password",
        "magic",
        "magic-link",
        "magic_link",
        "magiclink",
        "login",
        "signin",
        "sign-in",
        "verify",
        "verification",
        "confirm",
        "activate",
        "invite",
        "invitation",
        "token",
        "auth",
        "otp",
        "unsubscribe",
    }
)
MIN_RANDOM_TOKEN_CHARS = 20
MIN_LINK_TOKEN_CHARS = 6
MIN_BARE_SECRET_CHARS = 6


def redact(text: str) -> str:
    """``text`` with card numbers, password-like values, tokens and secret link parts blanked."""
    text = _URL.sub(_url, text)
    text = _AUTHORIZATION.sub(lambda found: found.group(1) + found.group(2) + HIDDEN, text)
    text = _JWT.sub(HIDDEN, text)
    text = _CARD_CANDIDATE.sub(_card, text)
    text = _SECRET_VALUE.sub(lambda found: found.group(1) + HIDDEN, text)
    return _BARE_SECRET_VALUE.sub(_bare_secret, text)


def redact_path(path: str) -> str:
    """A web address's path with each credential-like part (``is_credential``) as ``:token``."""
    parts = path.split("/")
    blanked: list[str] = []
    for n, part in enumerate(parts):
        after = parts[n - 1].lower() if n else ""
        blanked.append(BLANKED_PATH_PART if is_credential(part, after=after) else part)
    return "/".join(blanked)


def is_credential(part: str, *, after: str = "") -> bool:
    """Whether one path part looks like a credential: a JSON web token, a long random token
    (``MIN_RANDOM_TOKEN_CHARS`` or more, whatever its digits), or the code of a reset or
    sign-in link (the part ``after`` a word such as ``reset`` or ``magic-link``)."""
    if not part or not _TOKEN_CHARS.match(part):
        return False
    if _JWT_PART.match(part):
        return True
    # Words joined by dashes (``annual-report-2024.pdf``) name a place; one unbroken run
    # this long, or parts mixing digits, letters and case, do not.
    words = [w for w in re.split(r"[-_.~]", part) if w]
    if len(words) > 1 and all(_is_word(w) for w in words):
        return False
    if after in _LINK_WORDS and len(part) >= MIN_LINK_TOKEN_CHARS and _looks_made_up(part):
        return True
    return len(part) >= MIN_RANDOM_TOKEN_CHARS


def _is_word(part: str) -> bool:
    """A word as people write it (``report``, ``Report``, ``PDF``) or a number."""
    return part.isdigit() or (
        part.isalpha() and (part.islower() or part.isupper() or part[1:].islower())
    )


def _looks_made_up(value: str) -> bool:
    """A value mixing kinds of characters (digits, capitals after the first, symbols) or a
    long run of letters: what a password or a code looks like, not a word."""
    value = value.strip("\"'")
    kinds = sum(
        (
            any(c.isdigit() for c in value),
            any(c.isupper() for c in value[1:]),
            any(c.islower() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
    return kinds >= 2 and not (value[:1].isupper() and value[1:].islower() and value.isalpha())


def _url(found: re.Match[str]) -> str:
    # Punctuation that ends the sentence is not the address's.
    url = found.group(0).rstrip(".,;:!?)")
    after = found.group(0)[len(url) :]
    return _blank_url(url) + after


def _blank_url(url: str) -> str:
    scheme_end = url.index("//") + 2
    path_start = url.find("/", scheme_end)
    if path_start < 0:
        return url
    tail_start = min(
        (i for i in (url.find("?", path_start), url.find("#", path_start)) if i >= 0),
        default=len(url),
    )
    query_end = url.find("#", tail_start)
    query_end = len(url) if query_end < 0 else query_end
    return (
        url[:path_start]
        + redact_path(url[path_start:tail_start])
        + _blank_query(url[tail_start:query_end])
        + url[query_end:]
    )


def _blank_query(query: str) -> str:
    """A ``?…`` query with the value of each credential-like parameter blanked (by its name,
    or a value that is a credential by itself)."""
    if not query.startswith("?"):
        return query
    pairs = []
    for pair in query[1:].split("&"):
        name, sign, value = pair.partition("=")
        secret = name.lower() in _QUERY_SECRETS or is_credential(value)
        pairs.append(f"{name}={HIDDEN}" if sign and value and secret else pair)
    return "?" + "&".join(pairs)


def _bare_secret(found: re.Match[str]) -> str:
    label, value = found.group(1), found.group(2)
    if value == HIDDEN or value.startswith("["):
        return found.group(0)
    digits = value.isascii() and value.isdigit() and 3 <= len(value) <= 10
    made_up = len(value) >= MIN_BARE_SECRET_CHARS and _looks_made_up(value)
    if not (made_up or (digits and _DIGIT_LABELS.match(label))):
        return found.group(0)
    return label + HIDDEN


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
