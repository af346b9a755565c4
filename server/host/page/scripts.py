"""The page scripts, one file each under ``js/``, read and assembled once.

A file opens with a header of ``//`` lines:

* ``// world: isolated`` or ``// world: main``: where it runs (``any`` for a helper
  that either kind includes); anything a safety decision reads runs isolated;
* a line or more saying what it does and why it runs in that world;
* ``// include: lib/name.js``: a helper it uses, one per line.

A script (a file directly in ``js/``) is one function expression; a helper (in
``js/lib/``) declares constants and functions. ``page_script`` resolves the includes
recursively, each helper once and before whatever includes it, and returns one
expression: the helpers inside a function that returns the script's function, so a
script runs standalone in one ``evaluate`` call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable

WORLDS = ("isolated", "main", "any")
HELPERS = "lib"
_WORLD = re.compile(r"//\s*world:\s*(\S+)")
_INCLUDE = re.compile(r"//\s*include:\s*(\S+)")


class ScriptError(Exception):
    """A script or helper that is missing, has no world, or includes in a circle."""


@dataclass(frozen=True)
class ScriptFile:
    """One file of ``js/``: its path there, its world, its includes and its text."""

    path: str
    world: str
    includes: tuple[str, ...]
    text: str


def script_folder() -> Traversable:
    """The ``js/`` folder (inside the installed package)."""
    return resources.files("server.host.page").joinpath("js")


@cache
def read_file(path: str) -> ScriptFile:
    """The file ``js/<path>`` (such as ``inspect.js`` or ``lib/dom.js``) and its header."""
    source = script_folder().joinpath(*path.split("/"))
    if not path.endswith(".js") or not source.is_file():
        raise ScriptError(f"no page script {path!r}")
    text = source.read_text(encoding="utf-8")
    world: str | None = None
    includes: list[str] = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        if (found := _WORLD.fullmatch(line.strip())) is not None:
            world = found.group(1)
        elif (found := _INCLUDE.fullmatch(line.strip())) is not None:
            includes.append(found.group(1))
    if world not in WORLDS:
        raise ScriptError(f"{path} names no world (// world: isolated, main or any)")
    return ScriptFile(path, world, tuple(includes), text)


def included(path: str) -> list[ScriptFile]:
    """The helpers ``path`` needs, each once, every helper after those it includes."""
    order: list[ScriptFile] = []
    done: set[str] = set()

    def visit(current: str, chain: tuple[str, ...]) -> None:
        for name in read_file(current).includes:
            if name in chain:
                raise ScriptError(f"{' -> '.join((*chain, name))} includes in a circle")
            if name in done:
                continue
            if not name.startswith(f"{HELPERS}/"):
                raise ScriptError(f"{current} includes {name}, which is no helper in {HELPERS}/")
            visit(name, (*chain, name))
            done.add(name)
            order.append(read_file(name))

    visit(path, (path,))
    return order


def script_world(name: str) -> str:
    """The world the script ``name`` runs in: ``isolated`` or ``main``."""
    return read_file(f"{name}.js").world


@cache
def page_script(name: str) -> str:
    """The script ``js/<name>.js`` as one function expression, its helpers inside it."""
    script = read_file(f"{name}.js")
    if script.world == "any":
        raise ScriptError(f"{name}.js names no world it runs in")
    helpers = included(script.path)
    for helper in helpers:
        if helper.world not in ("any", script.world):
            raise ScriptError(f"{name}.js runs {script.world} but includes {helper.path}")
    if not helpers:
        return script.text
    body = "\n".join(helper.text for helper in helpers)
    return f"(() => {{\n{body}\nreturn (\n{script.text.rstrip()}\n);\n}})()"


def around_agent_code(name: str, code: str, *args: object, body: bool = False) -> str:
    """The script ``name`` called with an agent's ``code`` as an async function, then ``args``
    (as JSON). The function gives the value of ``code`` as an expression, or, with ``body``,
    runs it as statements and gives what they ``return``. The script decides what of that
    value leaves the page."""
    run = f"async () => {{\n{code}\n}}" if body else f"async () => (\n{code}\n)"
    rest = "".join(f", {json.dumps(arg)}" for arg in args)
    return f"({page_script(name)})({run}{rest})"
