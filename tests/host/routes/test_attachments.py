"""Chat attachments over real peers: uploaded to the agent's workspace, attached by path,
copied and hashed, typed by name whatever MIME the sender claims; a PNG reaches the
provider as an image block, the rest as path mentions; an SVG's preview only ever as a
data: URL; and the host lists the attachment capabilities."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from tests.host.routes.conftest import Team, refused
from tests.host.routes.test_threads import until
from tests.host.routes.test_workspace import upload
from tests.support.fakes.anthropic import API_KEY, FakeAnthropic, MessageEvents
from tests.support.images import tiny_png

SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect/></svg>'


async def test_the_host_lists_the_attachment_capabilities(team: Team) -> None:
    listed = (await team.member.call("capabilities"))["capabilities"]
    for name in (
        "media-attachments",
        "zip-attachments",
        "mp4-attachments",
        "svg-attachments",
        "any-file-attachments",
    ):
        assert name in listed


async def test_attachments_are_copied_typed_by_name_and_delivered(team: Team) -> None:
    png = tiny_png()
    files = {
        "inbox/photo.png": png,
        "inbox/logo.svg": SVG,
        "inbox/archive.zip": b"PK\x03\x04 not really",
        "inbox/clip.mp4": b"\x00\x00\x00\x18ftypmp42",
        "inbox/photo.heic": b"heic bytes",
    }
    async with FakeAnthropic() as fake:
        await team.admin.call(
            "providers-v1/update", {"provider": "anthropic", "baseUrl": fake.base_url}
        )
        await team.admin.call("providers-v1/set_key", {"provider": "anthropic", "key": API_KEY})
        agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
        thread = await team.member.call("threads-v1/start", {"agentId": agent["id"]})
        for path, data in files.items():
            await upload(team.member, data, path, agentId=agent["id"])
        fake.script(MessageEvents().text("Seen.").stop().reply())
        attachments: list[dict[str, Any]] = [{"path": path} for path in files]
        # A claimed type changes nothing: the ZIP stays a ZIP.
        attachments[2]["mimeType"] = "image/png"
        await team.member.call(
            "threads-v1/send",
            {"threadId": thread["id"], "text": "Look at these", "attachments": attachments},
        )
        await until(team.member, thread["id"], "turn-finished")

        contents = await team.member.call("threads-v1/get", {"threadId": thread["id"]})
        sent = contents["messages"][0]["attachments"]
        assert [(a["name"], a["mimeType"], a["kind"], a["previewKind"]) for a in sent] == [
            ("photo.png", "image/png", "image", "image"),
            ("logo.svg", "image/svg+xml", "file", "image"),
            ("archive.zip", "application/zip", "file", "none"),
            ("clip.mp4", "video/mp4", "file", "none"),
            ("photo.heic", "application/octet-stream", "file", "none"),
        ]
        for attachment, data in zip(sent, files.values(), strict=True):
            assert attachment["sha256"] == hashlib.sha256(data).hexdigest()
            assert attachment["size"] == len(data)
            assert attachment["path"].startswith("attachments/")
        assert "images" not in contents["messages"][0]

        [message] = fake.requests[0].messages()
        blocks = message["content"]
        assert blocks[0] == {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png).decode(),
            },
        }
        [text] = [b["text"] for b in blocks if b["type"] == "text"]
        assert text.startswith("Look at these")
        for attachment in sent[1:]:
            assert attachment["path"] in text
        assert sent[0]["path"] not in text
        assert len([b for b in blocks if b["type"] == "image"]) == 1

        # An SVG's preview comes only as a data: URL; a ZIP has none.
        ref = {"threadId": thread["id"]}
        preview = await team.member.call(
            "threads-v1/attachment_preview", {**ref, "sha256": sent[1]["sha256"]}
        )
        assert preview["mimeType"] == "image/svg+xml"
        assert preview["dataUrl"] == "data:image/svg+xml;base64," + base64.b64encode(SVG).decode()
        no_preview = {**ref, "sha256": sent[2]["sha256"]}
        assert await refused(team.member, "threads-v1/attachment_preview", no_preview) == (
            "attachmentNoPreview"
        )
        unknown = {**ref, "sha256": "0" * 64}
        assert await refused(team.member, "threads-v1/attachment_preview", unknown) == (
            "attachmentNotFound"
        )
        # The owner does not see the member's thread, so neither its attachments.
        unseen = {**ref, "sha256": sent[1]["sha256"]}
        assert await refused(team.admin, "threads-v1/attachment_preview", unseen) == (
            "threadNotFound"
        )
        assert json.dumps(contents).count(base64.b64encode(png).decode()) == 0


async def test_bad_attachments_leave_no_message(team: Team) -> None:
    agent = await team.admin.call("agents-v1/create", {"name": "Scout"})
    thread = await team.member.call("threads-v1/start", {"agentId": agent["id"]})
    send = {"threadId": thread["id"], "text": "See"}
    missing = {**send, "attachments": [{"path": "nowhere.png"}]}
    assert await refused(team.member, "threads-v1/send", missing) == "workspaceNotFound"
    escape = {**send, "attachments": [{"path": "../other/x.png"}]}
    assert await refused(team.member, "threads-v1/send", escape) == "workspacePathInvalid"
    too_many = {**send, "attachments": [{"path": f"{n}.txt"} for n in range(11)]}
    assert await refused(team.member, "threads-v1/send", too_many) == "invalidArgument"
    contents = await team.member.call("threads-v1/get", {"threadId": thread["id"]})
    assert (contents["messages"], contents["turns"]) == ([], [])
