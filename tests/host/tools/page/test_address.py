"""Address-bar resolution: what a person could open, an agent can; the rest is refused."""

from __future__ import annotations

import pytest

from server.common.errors import InvalidArgument
from server.config import load_settings
from server.host.tools.context import ToolSettings
from server.host.tools.page.address import resolve_address
from server.host.tools.results import ToolFailure

SEARCH = "https://search.test/?q={query}"


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("https://example.com/a?b=1", "https://example.com/a?b=1"),
        ("http://example.com", "http://example.com"),
        ("example.com", "https://example.com"),
        ("news.example.co.uk/today", "https://news.example.co.uk/today"),
        ("example.com:8443/x", "https://example.com:8443/x"),
        ("localhost:8080/app", "http://localhost:8080/app"),
        ("127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("[::1]:8000/", "http://[::1]:8000/"),
        ("  example.com  ", "https://example.com"),
        ("about:blank", "about:blank"),
    ],
)
def test_addresses_load_as_typed_or_with_a_scheme(typed: str, url: str) -> None:
    resolved = resolve_address(typed, SEARCH)
    assert (resolved.kind, resolved.url) == ("url", url)


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("weather in lisbon", "https://search.test/?q=weather+in+lisbon"),
        ("rust", "https://search.test/?q=rust"),
        ("1.5", "https://search.test/?q=1.5"),
        ("what is example.com", "https://search.test/?q=what+is+example.com"),
        ("note: buy milk", "https://search.test/?q=note%3A+buy+milk"),
        ("?example.com", "https://search.test/?q=example.com"),
        ("c++ & rust", "https://search.test/?q=c%2B%2B+%26+rust"),
    ],
)
def test_phrases_become_searches(typed: str, url: str) -> None:
    resolved = resolve_address(typed, SEARCH)
    assert (resolved.kind, resolved.url) == ("search", url)


@pytest.mark.parametrize(
    "typed",
    [
        "file:///etc/passwd",
        "chrome://settings",
        "chrome-extension://abc/page.html",
        "javascript:alert(1)",
        "javascript:alert('a b')",
        "data:text/html,<h1>hi there</h1>",
        "blob:https://example.com/1234",
        "view-source:https://example.com",
        "about:settings",
        "devtools://devtools/bundled/inspector.html",
        "ftp://example.com/file",
    ],
)
def test_browser_disk_and_script_addresses_are_refused(typed: str) -> None:
    with pytest.raises(ToolFailure) as refused:
        resolve_address(typed, SEARCH)
    assert refused.value.code == "addressRefused"


@pytest.mark.parametrize(
    "typed",
    [
        "mailto:ana@example.com",
        "tel:+351123456789",
        "sms:+351123456789",
        "zoommtg://zoom.us/join?confno=1",
        "slack://open",
        "itms-apps://apps.apple.com/app/id1",
        "intent://scan/#Intent;scheme=zxing;end",
        "magnet:?xt=urn:btih:abc",
    ],
)
def test_other_apps_addresses_are_refused_not_launched(typed: str) -> None:
    with pytest.raises(ToolFailure) as refused:
        resolve_address(typed, SEARCH)
    assert refused.value.code == "externalAppRefused"


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("", "emptyAddress"),
        ("   ", "emptyAddress"),
        ("?", "emptyAddress"),
        ("https://", "invalidAddress"),
        ("http://[::1", "invalidAddress"),
        ("x" * 9000, "addressTooLong"),
    ],
)
def test_empty_and_malformed_addresses_are_refused(typed: str, code: str) -> None:
    with pytest.raises(ToolFailure) as refused:
        resolve_address(typed, SEARCH)
    assert refused.value.code == code


def test_phrases_go_to_the_search_address_the_operator_set() -> None:
    settings = load_settings(env={"CREWHOST_HOST_SEARCH_URL": "https://search.example/?q={query}"})
    search_url = ToolSettings.from_settings(settings.host).search_url
    assert resolve_address("opening hours", search_url).url == (
        "https://search.example/?q=opening+hours"
    )
    with pytest.raises(InvalidArgument):
        load_settings(env={"CREWHOST_HOST_SEARCH_URL": "file:///etc/passwd?{query}"})
