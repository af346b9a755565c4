"""Image attachments on both wire formats: image blocks (Anthropic) or image_url parts
(OpenAI-compatible) for the loaded images, a path mention for every other attachment,
and nothing of the bytes in the stored message."""

from __future__ import annotations

from server.host.agents.providers import anthropic, openai
from server.host.agents.providers.transcript import (
    AssistantMessage,
    Attachment,
    ImageBlock,
    ToolCall,
    ToolResult,
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


def test_a_tool_results_images_go_as_image_blocks_to_anthropic_only() -> None:
    call = ToolCall(id="c1", name="mcp__camera__shot", arguments={})
    result = ToolResult(
        call_id="c1",
        content='{"content": [{"type": "image", "description": "an image"}]}',
        images=(ImageBlock(sha256="c" * 64, media_type="image/webp", data="BBBB"),),
    )
    transcript: list[UserMessage | AssistantMessage | ToolResult] = [
        UserMessage(text="Shoot"),
        AssistantMessage(tool_calls=(call,)),
        result,
    ]
    _user, _assistant, results = anthropic.render_messages(transcript)
    [block] = results["content"]
    assert block["type"] == "tool_result"
    text, image = block["content"]
    assert text == {"type": "text", "text": result.content}
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/webp", "data": "BBBB"},
    }
    # Chat Completions takes text only in a tool message: it says the images are not shown.
    tool_message = openai.render_messages(transcript)[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == f"{result.content}\n{openai.IMAGES_NOT_SHOWN}"
    # The bytes are for the turn's requests only: never stored.
    assert "BBBB" not in message_to_json(result)
