"""A viewer's key and pointer messages as the CDP ``Input`` events Chromium acts on.

Chromium edits a field only when a key event carries its Windows virtual key code; a key
with text is a ``keyDown`` (key press and character), one without is a ``rawKeyDown``.
On Linux Blink maps Ctrl shortcuts and editing keys to commands by itself; the macOS
shortcuts a viewer on a Mac presses (Cmd+A, Option+Left, …) mean nothing to it, so they
carry their editing commands. A pointer move during a drag carries the held buttons.
"""

from __future__ import annotations

from typing import Any

from server.common.protocol.view import Key, Pointer

ALT, CTRL, META, SHIFT = 1, 2, 4, 8

_KEY_TYPES = {"up": "keyUp", "char": "char"}
_MOUSE_TYPES = {"move": "mouseMoved", "down": "mousePressed", "up": "mouseReleased"}
# CDP's ``buttons`` bits, which are the DOM's.
BUTTON_BITS = {"left": 1, "right": 2, "middle": 4}

# Windows virtual key codes of keys named by ``key`` whatever the layout.
_NAMED_KEYS = {
    "Backspace": 8,
    "Tab": 9,
    "Enter": 13,
    "Shift": 16,
    "Control": 17,
    "Alt": 18,
    "Pause": 19,
    "CapsLock": 20,
    "Escape": 27,
    " ": 32,
    "PageUp": 33,
    "PageDown": 34,
    "End": 35,
    "Home": 36,
    "ArrowLeft": 37,
    "ArrowUp": 38,
    "ArrowRight": 39,
    "ArrowDown": 40,
    "PrintScreen": 44,
    "Insert": 45,
    "Delete": 46,
    "Meta": 91,
    "ContextMenu": 93,
    "NumLock": 144,
    "ScrollLock": 145,
    **{f"F{n}": 111 + n for n in range(1, 25)},
}
# Codes of the keys whose virtual key code follows their position (punctuation, keypad).
_CODES = {
    "Space": 32,
    **{f"Numpad{n}": 96 + n for n in range(10)},
    "NumpadMultiply": 106,
    "NumpadAdd": 107,
    "NumpadSubtract": 109,
    "NumpadDecimal": 110,
    "NumpadDivide": 111,
    "NumpadEnter": 13,
    "Semicolon": 186,
    "Equal": 187,
    "Comma": 188,
    "Minus": 189,
    "Period": 190,
    "Slash": 191,
    "Backquote": 192,
    "BracketLeft": 219,
    "Backslash": 220,
    "BracketRight": 221,
    "Quote": 222,
    "IntlBackslash": 226,
    **{f"Key{chr(c)}": c for c in range(ord("A"), ord("Z") + 1)},
    **{f"Digit{n}": 48 + n for n in range(10)},
}

# macOS editing shortcuts, by modifiers (Shift aside) and key: the command, and the one that
# extends the selection when Shift is held too (None where Shift makes no other command).
_MAC_COMMANDS: dict[tuple[int, str], tuple[str, str | None]] = {
    (META, "a"): ("selectAll", None),
    (META, "z"): ("undo", "redo"),
    (META, "y"): ("redo", None),
    (META, "ArrowLeft"): (
        "moveToBeginningOfLine",
        "moveToBeginningOfLineAndModifySelection",
    ),
    (META, "ArrowRight"): ("moveToEndOfLine", "moveToEndOfLineAndModifySelection"),
    (META, "ArrowUp"): (
        "moveToBeginningOfDocument",
        "moveToBeginningOfDocumentAndModifySelection",
    ),
    (META, "ArrowDown"): ("moveToEndOfDocument", "moveToEndOfDocumentAndModifySelection"),
    (META, "Backspace"): ("deleteToBeginningOfLine", None),
    (META, "Delete"): ("deleteToEndOfLine", None),
    (ALT, "ArrowLeft"): ("moveWordLeft", "moveWordLeftAndModifySelection"),
    (ALT, "ArrowRight"): ("moveWordRight", "moveWordRightAndModifySelection"),
    (ALT, "Backspace"): ("deleteWordBackward", None),
    (ALT, "Delete"): ("deleteWordForward", None),
}


def virtual_key_code(key: str, code: str) -> int:
    """The Windows virtual key code Chromium reads: letters and digits by what the key
    types (Ctrl+A is A on any layout), the keypad's by place, everything else by name or
    position."""
    if code.startswith("Numpad") and code in _CODES:
        return _CODES[code]
    if len(key) == 1 and key.isascii() and key.isalnum():
        return ord(key.upper())
    return _NAMED_KEYS.get(key) or _CODES.get(code, 0)


def key_location(code: str) -> int:
    """The DOM key location: 1 for a left modifier, 2 for a right one, 3 for the keypad."""
    if code.endswith("Left") and not code.startswith("Arrow"):
        return 1
    if code.endswith("Right") and not code.startswith("Arrow"):
        return 2
    return 3 if code.startswith("Numpad") else 0


def editing_commands(key: str, modifiers: int) -> list[str]:
    """The editing commands a macOS shortcut stands for (none for anything else)."""
    name = key.lower() if len(key) == 1 else key
    found = _MAC_COMMANDS.get((modifiers & ~SHIFT, name))
    if found is None:
        return []
    plain, shifted = found
    if modifiers & SHIFT:
        return [shifted] if shifted else []
    return [plain]


def key_event(message: Key) -> dict[str, Any]:
    """``Input.dispatchKeyEvent`` parameters for a key message."""
    params: dict[str, Any] = {
        "key": message.key,
        "code": message.code,
        "windowsVirtualKeyCode": virtual_key_code(message.key, message.code),
        "modifiers": message.modifiers,
        "location": key_location(message.code),
    }
    if message.code.startswith("Numpad"):
        params["isKeypad"] = True
    if message.action != "down":
        params["type"] = _KEY_TYPES[message.action]
        if message.action == "char":
            params["text"] = message.text
        return params
    text = message.text
    if not text and message.key == "Enter" and not message.modifiers & (ALT | CTRL | META):
        text = "\r"  # Enter types a line break, as a browser's own Enter does
    if text:
        params.update(type="keyDown", text=text, unmodifiedText=text)
    else:
        params["type"] = "rawKeyDown"
    commands = editing_commands(message.key, message.modifiers)
    if commands:
        params["commands"] = commands
    if message.repeat:
        params["autoRepeat"] = True
    return params


def mouse_event(message: Pointer, x: float, y: float, held: int) -> dict[str, Any]:
    """``Input.dispatchMouseEvent`` parameters for a pointer message (not a wheel), where
    ``held`` is the buttons held once this message has acted."""
    if message.action == "move":
        # A move names the button a drag holds, as Chromium's own moves do.
        button = next((name for name, bit in BUTTON_BITS.items() if held & bit), "none")
        click_count = 0
    else:
        button = message.button
        click_count = message.click_count
    return {
        "type": _MOUSE_TYPES[message.action],
        "x": x,
        "y": y,
        "button": button,
        "buttons": held,
        "clickCount": click_count,
        "modifiers": message.modifiers,
    }


def held_after(message: Pointer, held: int) -> int:
    """The buttons held once a pointer message has acted."""
    bit = BUTTON_BITS.get(message.button, 0)
    if message.action == "down":
        return held | bit
    if message.action == "up":
        return held & ~bit
    return held
