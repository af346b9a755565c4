"""Image attachments on both wire formats: image blocks (Anthropic) or image_url parts
(OpenAI-compatible) for the loaded images, a path mention for every other attachment,
and nothing of the bytes in the stored message."""

from __future__ import annotations

from server.host.agents.providers import anthropic, openai
from server.host.agents.providers.transcript import (
    Attachment,
    ImageBlock,
    UserMessage,
    message_from_json,
    message_to_json,
)

PNG = Attachment(
    name="a.png",
    path="attachments/aaaa/a.png",
    mime_type="image/png",
    kind="image",
    preview_kind="image",
    size=3,
    sha256="a" * 64,
)
ZIP = Attachment(
    name="b.zip",
    path="attachments/bbbb/b.zip",
    mime_type="application/zip",
    kind="file",
    preview_kind="none",
    size=9,
    sha256="b" * 64,
)
LOADED = UserMessage(
    text="Look",
    attachments=(PNG, ZIP),
    images=(ImageBlock(sha256="a" * 64, media_type="image/png", data="AAAA"),),
)


def test_anthropic_gets_an_image_block_and_a_mention() -> None:
    [message] = anthropic.render_messages([LOADED])
    image, text = message["content"]
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
    }
    assert text["text"].startswith("Look\n")
    assert ZIP.path in text["text"]
    assert PNG.path not in text["text"]


def test_openai_gets_an_image_url_part_and_a_mention() -> None:
    [message] = openai.render_messages([LOADED])
    text, image = message["content"]
    assert image == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert ZIP.path in text["text"]


def test_an_image_not_loaded_is_mentioned_and_bytes_are_never_stored() -> None:
    unloaded = UserMessage(text="Look", attachments=(PNG,))
    [message] = openai.render_messages([unloaded])
    assert PNG.path in message["content"]
    stored = message_to_json(LOADED)
    assert "AAAA" not in stored
    assert message_from_json(stored) == LOADED.model_copy(update={"images": ()})
