"""Key and pointer messages as the CDP input events Chromium acts on (no browser needed)."""

from __future__ import annotations

from typing import Any

import pytest

from server.common.protocol.view import Key, Pointer
from server.host.live.cdp_input import (
    ALT,
    CTRL,
    META,
    SHIFT,
    editing_commands,
    held_after,
    key_event,
    mouse_event,
    virtual_key_code,
)


def key(action: str = "down", **fields: Any) -> Key:
    return Key.model_validate({"type": "key", "action": action, **fields})


def pointer(action: str, **fields: Any) -> Pointer:
    return Pointer.model_validate(
        {"type": "pointer", "action": action, "x": 0.5, "y": 0.5, **fields}
    )


@pytest.mark.parametrize(
    ("name", "code", "expected"),
    [
        ("Backspace", "Backspace", 8),
        ("Delete", "Delete", 46),
        ("ArrowLeft", "ArrowLeft", 37),
        ("ArrowDown", "ArrowDown", 40),
        ("Home", "Home", 36),
        ("End", "End", 35),
        ("PageUp", "PageUp", 33),
        ("PageDown", "PageDown", 34),
        ("Enter", "Enter", 13),
        ("Enter", "NumpadEnter", 13),
        ("Tab", "Tab", 9),
        ("Escape", "Escape", 27),
        ("F5", "F5", 116),
        (" ", "Space", 32),
        ("a", "KeyA", 65),
        ("A", "KeyA", 65),
        ("a", "KeyQ", 65),  # AZERTY: Ctrl+A is A where the A is, not where QWERTY has it
        ("ф", "KeyA", 65),  # a Cyrillic layout: the position names the shortcut
        ("!", "Digit1", 49),
        ("7", "Numpad7", 103),
        ("-", "Minus", 189),
        ("é", "", 0),
    ],
)
def test_the_virtual_key_code_follows_the_key_or_else_its_place(
    name: str, code: str, expected: int
) -> None:
    assert virtual_key_code(name, code) == expected


def test_a_printable_key_is_a_key_down_with_its_text() -> None:
    params = key(key="a", code="KeyA", text="a", modifiers=SHIFT)
    assert key_event(params) == {
        "type": "keyDown",
        "key": "a",
        "code": "KeyA",
        "windowsVirtualKeyCode": 65,
        "text": "a",
        "unmodifiedText": "a",
        "modifiers": SHIFT,
        "location": 0,
    }


def test_an_editing_key_is_a_raw_key_down_without_text() -> None:
    params = key_event(key(key="Backspace", code="Backspace", repeat=True))
    assert params["type"] == "rawKeyDown"
    assert params["windowsVirtualKeyCode"] == 8
    assert "text" not in params
    assert "commands" not in params
    assert params["autoRepeat"] is True


def test_enter_types_a_line_break_unless_a_shortcut_modifier_is_held() -> None:
    assert key_event(key(key="Enter", code="Enter"))["text"] == "\r"
    assert key_event(key(key="Enter", code="Enter", modifiers=SHIFT))["text"] == "\r"
    assert key_event(key(key="Enter", code="Enter", modifiers=CTRL))["type"] == "rawKeyDown"


def test_a_release_and_a_char_keep_their_types_and_where_the_key_is() -> None:
    up = key_event(key("up", key="Shift", code="ShiftRight"))
    assert (up["type"], up["windowsVirtualKeyCode"], up["location"]) == ("keyUp", 16, 2)
    char = key_event(key("char", key="ß", text="ß"))
    assert (char["type"], char["text"]) == ("char", "ß")
    assert key_event(key("up", key="1", code="Numpad1"))["isKeypad"] is True


def test_ctrl_shortcuts_need_no_commands_on_linux_chromium() -> None:
    for name in ("a", "z", "y", "ArrowLeft", "Backspace"):
        assert editing_commands(name, CTRL) == []
        assert "commands" not in key_event(key(key=name, modifiers=CTRL))


@pytest.mark.parametrize(
    ("name", "modifiers", "commands"),
    [
        ("a", META, ["selectAll"]),
        ("A", META | SHIFT, []),
        ("z", META, ["undo"]),
        ("Z", META | SHIFT, ["redo"]),
        ("y", META, ["redo"]),
        ("ArrowLeft", META, ["moveToBeginningOfLine"]),
        ("ArrowRight", META | SHIFT, ["moveToEndOfLineAndModifySelection"]),
        ("ArrowDown", META, ["moveToEndOfDocument"]),
        ("Backspace", META, ["deleteToBeginningOfLine"]),
        ("ArrowLeft", ALT, ["moveWordLeft"]),
        ("ArrowRight", ALT | SHIFT, ["moveWordRightAndModifySelection"]),
        ("Backspace", ALT, ["deleteWordBackward"]),
        ("a", META | CTRL, []),
        ("b", META, []),
    ],
)
def test_mac_shortcuts_carry_their_editing_commands(
    name: str, modifiers: int, commands: list[str]
) -> None:
    assert editing_commands(name, modifiers) == commands
    params = key_event(key(key=name, modifiers=modifiers))
    assert params.get("commands", []) == commands


def test_a_drag_holds_its_button_until_the_release() -> None:
    held = 0
    sent = []
    for message in (
        pointer("move"),
        pointer("down", button="left", clickCount=1),
        pointer("move"),
        pointer("up", button="left", clickCount=1),
        pointer("move"),
    ):
        held = held_after(message, held)
        sent.append(mouse_event(message, 10, 20, held))
    assert [(p["type"], p["button"], p["buttons"]) for p in sent] == [
        ("mouseMoved", "none", 0),
        ("mousePressed", "left", 1),
        ("mouseMoved", "left", 1),
        ("mouseReleased", "left", 0),
        ("mouseMoved", "none", 0),
    ]
    assert [p["clickCount"] for p in sent] == [0, 1, 0, 1, 0]


def test_buttons_add_up_and_a_double_click_keeps_its_count() -> None:
    held = held_after(pointer("down", button="right"), 0)
    held = held_after(pointer("down", button="middle"), held)
    assert held == 6
    assert mouse_event(pointer("move"), 0, 0, held)["button"] == "right"
    second = pointer("down", button="left", clickCount=2)
    assert mouse_event(second, 0, 0, held_after(second, 0))["clickCount"] == 2
