"""One blanking rule: card numbers, password-like values (with or without a separator),
JSON web tokens, and the credential-like parts of a web address's path."""

from __future__ import annotations

import pytest

from server.common.redaction import is_credential, redact, redact_path

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiJhZGFAZXhhbXBsZS5jb20iLCJleHAiOjE3MDB9."
    "s3Kq1Wd0ZrV-n6mYtQpXhLcE8aG2bN4oUj7fRi9TzkM"
)
# 32 random characters with fewer than three digits: missed by a digit count.
FEW_DIGITS = "qXbTfRwKmZpLcVnJhGdSaYeUiOzEtBr7"
NO_DIGITS = "hWzqKcPmRtLfXvBnJgSdYaEuOiTrZwQe"


@pytest.mark.parametrize(
    ("path", "blanked"),
    [
        (f"/auth/magic/{JWT}", "/auth/magic/:token"),
        (f"/session/{JWT}/continue", "/session/:token/continue"),
        (f"/s/{FEW_DIGITS}", "/s/:token"),
        (f"/share/{NO_DIGITS}", "/share/:token"),
        ("/reset/aB3dEf9x", "/reset/:token"),
        ("/password-reset/k2mx7q", "/password-reset/:token"),
        ("/magic-link/Xk29aa01", "/magic-link/:token"),
        ("/verify/Q1w2E3r4t5", "/verify/:token"),
    ],
)
def test_credential_like_path_parts_become_token(path: str, blanked: str) -> None:
    assert redact_path(path) == blanked


@pytest.mark.parametrize(
    "part",
    [
        "settings",
        "annual-report-2024-final.pdf",
        "Representational_state_transfer",
        "how-to-reset-your-password",
        "callback",
        "v2",
    ],
)
def test_places_stay(part: str) -> None:
    assert not is_credential(part)
    assert not is_credential(part, after="login")


def test_a_reset_link_word_alone_is_no_token() -> None:
    assert redact_path("/login/callback") == "/login/callback"
    assert redact_path("/reset/password") == "/reset/password"


def test_addresses_in_text_lose_their_secret_parts_but_keep_the_rest() -> None:
    text = f"Signed in through https://app.example.com/auth/magic/{JWT}?next=/home then left"
    assert redact(text) == (
        "Signed in through https://app.example.com/auth/magic/:token?next=/home then left"
    )
    assert redact(f"reset at https://ex.com/reset/{FEW_DIGITS}.") == (
        "reset at https://ex.com/reset/:token."
    )
    assert redact("see https://example.com/docs/getting-started") == (
        "see https://example.com/docs/getting-started"
    )


def test_an_addresss_credential_parameters_are_blanked_and_the_rest_kept() -> None:
    assert redact("back at https://shop.example/cb?code=4f9XkQ2a&lang=en#top now") == (
        "back at https://shop.example/cb?code=[redacted]&lang=en#top now"
    )
    assert redact("https://cdn.example/f.png?sig=Zm9vYmFyYmF6cXV4cXV1eA&w=40") == (
        "https://cdn.example/f.png?sig=[redacted]&w=40"
    )
    assert redact("https://shop.example/search?q=green+tea&page=2") == (
        "https://shop.example/search?q=green+tea&page=2"
    )


def test_a_bare_json_web_token_is_blanked() -> None:
    assert JWT not in redact(f"the header was Bearer {JWT}")


@pytest.mark.parametrize(
    ("text", "blanked"),
    [
        ("password PlainText42 for the shop", "password [redacted] for the shop"),
        ("Password Plainsecret9", "Password [redacted]"),
        ("api key sk-live-abc123", "api key [redacted]"),
        ("token Zq8rT1xYw", "token [redacted]"),
        ("api key: sk-live-abc123", "api key: [redacted]"),
        ("my password is hunter2", "my password is [redacted]"),
        ("otp 482913", "otp [redacted]"),
        ("the PIN 4829 opens it", "the PIN [redacted] opens it"),
        ("Authorization: Bearer sk-live-abc123def456", "Authorization: Bearer [redacted]"),
        ("sent with Basic dXNlcjpodW50ZXIy", "sent with Basic [redacted]"),
    ],
)
def test_a_label_with_or_without_a_separator_hides_its_value(text: str, blanked: str) -> None:
    assert redact(text) == blanked


@pytest.mark.parametrize(
    "text",
    [
        "the password reset page",
        "a token expired",
        "Password Manager",
        "pin the tab",
        "PIN 12 of the map",
        "the basic plan",
        "a bearer of bad news",
    ],
)
def test_a_label_before_an_ordinary_word_stays(text: str) -> None:
    assert redact(text) == text


def test_redaction_keeps_ordinary_numbers() -> None:
    assert redact("order 1234567890123 shipped") == "order 1234567890123 shipped"
    assert redact("card 4242-4242-4242-4242 ok") == "card [card number] ok"
    assert redact('{"password": "s3cret!"}') == '{"password": [redacted]}'
    assert redact("the one-time code is 448812") == "the one-time code is [redacted]"
