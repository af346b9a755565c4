"""The event-stream parser: framing by the WHATWG rules, any chunking, bounded memory."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.host.agents.providers.sse import SSEError, SSEEvent, SSEParser


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.finish()


def test_named_events_and_the_default_type() -> None:
    stream = b"event: ping\ndata: {}\n\ndata: plain\n\n"
    assert parse(stream) == [SSEEvent("ping", "{}"), SSEEvent("message", "plain")]


def test_multi_line_data_is_joined_with_line_feeds() -> None:
    assert parse(b"data: one\ndata:two\ndata:  three\n\n") == [
        SSEEvent("message", "one\ntwo\n three")
    ]


def test_comments_are_skipped_and_a_comment_alone_dispatches_nothing() -> None:
    stream = b": OPENROUTER PROCESSING\n\n:\n\ndata: x\n: between\n\n"
    assert parse(stream) == [SSEEvent("message", "x")]


@pytest.mark.parametrize("end", [b"\r\n", b"\n", b"\r"])
def test_every_line_ending(end: bytes) -> None:
    stream = b"event: a" + end + b"data: 1" + end + end + b"data: 2" + end + end
    assert parse(stream) == [SSEEvent("a", "1"), SSEEvent("message", "2")]


def test_cr_and_lf_split_across_chunks_are_one_line_ending() -> None:
    assert parse(b"data: 1\r", b"\n\r", b"\ndata: 2\r\n\r\n") == [
        SSEEvent("message", "1"),
        SSEEvent("message", "2"),
    ]


def test_a_character_split_across_chunks() -> None:
    data = "data: héllo ✓ 🙂\n\n".encode()
    cut = data.index("🙂".encode()) + 2
    assert parse(data[:cut], data[cut:]) == [SSEEvent("message", "héllo ✓ 🙂")]


def test_a_final_event_without_its_blank_line_is_dispatched_at_the_end() -> None:
    assert parse(b"data: [DONE]") == [SSEEvent("message", "[DONE]")]
    assert parse(b"data: [DONE]\n") == [SSEEvent("message", "[DONE]")]


def test_fields_ids_and_a_byte_order_mark() -> None:
    stream = b"\xef\xbb\xbfid: 7\nretry: 10\nunknown: x\ndata\n\n"
    assert parse(stream) == [SSEEvent("message", "", "7")]


def test_an_event_type_without_data_dispatches_nothing() -> None:
    assert parse(b"event: lonely\n\ndata: x\n\n") == [SSEEvent("message", "x")]


def test_an_endless_line_is_refused_before_it_fills_memory() -> None:
    parser = SSEParser(max_line_chars=1000)
    parser.feed(b"data: " + b"x" * 900)
    with pytest.raises(SSEError, match="longer than 1000"):
        parser.feed(b"x" * 200)


def test_a_long_line_inside_one_chunk_is_refused() -> None:
    with pytest.raises(SSEError):
        SSEParser(max_line_chars=100).feed(b"data: " + b"y" * 200 + b"\n\n")


def test_a_huge_event_of_short_lines_is_refused() -> None:
    parser = SSEParser(max_event_chars=1000)
    with pytest.raises(SSEError, match="larger than 1000"):
        parser.feed(b"data: 0123456789\n" * 200)


SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
_text = st.text(
    alphabet=st.characters(exclude_characters="\r\n", exclude_categories=SURROGATES),
    max_size=20,
)
_event = st.tuples(
    st.one_of(st.none(), _text.filter(lambda name: name != "" and ":" not in name)),
    st.lists(_text, min_size=1, max_size=3),
    st.booleans(),  # a comment before the event
)


@given(
    events=st.lists(_event, max_size=6),
    line_end=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=30),
    trailing_blank=st.booleans(),
)
# What is checked is the events, not the time: a busy machine delays any one example.
@settings(deadline=None)
def test_any_chunking_of_a_valid_stream_gives_the_same_events(
    events: list[tuple[str | None, list[str], bool]],
    line_end: str,
    cuts: list[int],
    trailing_blank: bool,
) -> None:
    text, expected = "", []
    for name, lines, comment in events:
        if comment:
            text += ": keep-alive" + line_end
        if name is not None:
            text += f"event: {name}{line_end}"
        text += "".join(f"data: {line}{line_end}" for line in lines)
        text += line_end
        expected.append(SSEEvent(name or "message", "\n".join(lines)))
    if expected and not trailing_blank:
        text = text[: -len(line_end)]  # the last event ends with the stream, not a blank line
    data = text.encode()
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert parse(*chunks) == expected
    assert parse(data) == expected
