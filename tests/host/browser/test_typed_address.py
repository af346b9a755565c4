"""The one address-bar resolution a person's tab and an agent's tools share."""

from __future__ import annotations

import pytest

from server.host.browser.typed_address import TypedAddressRefused, resolve_typed_address

SEARCH = "https://search.test/?q={query}"


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("127.0.0.1:8080/page", "http://127.0.0.1:8080/page"),
        ("localhost:3000", "http://localhost:3000"),
        ("intranet:8080", "http://intranet:8080"),
        ("intranet:8080/wiki?a=1", "http://intranet:8080/wiki?a=1"),
        ("[::1]:8000", "http://[::1]:8000"),
        ("10.0.0.5", "http://10.0.0.5"),
        ("example.com:8443", "https://example.com:8443"),
        ("example.com", "https://example.com"),
    ],
)
def test_hosts_without_a_scheme_get_the_one_chrome_would_try(typed: str, url: str) -> None:
    assert resolve_typed_address(typed, SEARCH).url == url


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("intranet", "https://search.test/?q=intranet"),
        ("opening hours", "https://search.test/?q=opening+hours"),
    ],
)
def test_bare_words_are_searches(typed: str, url: str) -> None:
    resolved = resolve_typed_address(typed, SEARCH)
    assert (resolved.kind, resolved.url) == ("search", url)


@pytest.mark.parametrize(
    ("typed", "code", "scheme"),
    [
        ("tel:12345", "externalAppRefused", "tel"),
        ("mailto:1234", "externalAppRefused", "mailto"),
        ("http:8080", "invalidAddress", ""),
        ("about:1234", "addressRefused", "about"),
        ("file:///etc/passwd", "addressRefused", "file"),
    ],
)
def test_a_scheme_followed_by_digits_stays_that_scheme(typed: str, code: str, scheme: str) -> None:
    with pytest.raises(TypedAddressRefused) as refused:
        resolve_typed_address(typed, SEARCH)
    assert (refused.value.code, refused.value.scheme) == (code, scheme)
