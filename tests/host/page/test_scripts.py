"""The page scripts live in ``server/host/page/js/``, one file each, and only there.

Every file names the world it runs in; includes resolve (no missing helper, no circle,
each helper once and before its users); every helper a script calls is one it includes;
and no module under ``server/host`` holds page JavaScript in a string.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.host.page import scripts
from server.host.page.scripts import (
    HELPERS,
    ScriptError,
    included,
    page_script,
    read_file,
    script_world,
)

HOST = Path(scripts.__file__).resolve().parents[1]
JS = Path(scripts.__file__).resolve().parent / "js"
SCRIPTS = sorted(path.stem for path in JS.glob("*.js"))
HELPER_FILES = sorted(f"{HELPERS}/{path.name}" for path in (JS / HELPERS).glob("*.js"))
# A helper's top-level declarations, which the scripts that include it call.
_DECLARED = re.compile(r"^(?:const|let|function)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
# What page JavaScript looks like, inside a Python string.
_LOOKS_LIKE_JS = re.compile(r"=>|\bfunction\s*[\w$]*\s*\(|\bdocument\.|\bwindow\.")
# Calls that run their first argument (or ``expression``/``script``) in a page.
_RUNS_SCRIPT = {
    "evaluate",
    "evaluate_handle",
    "eval_on_selector",
    "eval_on_selector_all",
    "add_init_script",
    "wait_for_function",
}


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    """A test that points the loader at another folder leaves no cached file behind."""
    read_file.cache_clear()
    page_script.cache_clear()
    yield
    read_file.cache_clear()
    page_script.cache_clear()


def test_there_are_scripts_and_helpers() -> None:
    assert {"snapshot", "inspect", "state", "find", "world-call"} <= set(SCRIPTS)
    assert f"{HELPERS}/dom.js" in HELPER_FILES


@pytest.mark.parametrize("path", [f"{name}.js" for name in SCRIPTS] + HELPER_FILES)
def test_every_file_names_its_world_and_says_what_it_does(path: str) -> None:
    text = (JS / path).read_text(encoding="utf-8")
    header = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        header.append(line)
    assert header, f"{path} has no header"
    assert header[0].startswith("// world: "), f"{path} must open with its world"
    world = read_file(path).world
    if path.startswith(f"{HELPERS}/"):
        assert world in ("isolated", "main", "any")
    else:
        assert world in ("isolated", "main"), f"{path} runs somewhere: isolated or main"
    said = [line for line in header[1:] if not re.match(r"//\s*include:", line)]
    assert said, f"{path} says in its header what it does and why in that world"


@pytest.mark.parametrize("name", SCRIPTS)
def test_includes_resolve_each_once_before_their_users(name: str) -> None:
    helpers = [helper.path for helper in included(f"{name}.js")]
    assert len(helpers) == len(set(helpers))
    for position, helper in enumerate(helpers):
        assert set(read_file(helper).includes) <= set(helpers[:position]), helper
        assert read_file(helper).world in ("any", script_world(name))
    source = page_script(name)
    assert "/*COMMON*/" not in source
    for helper in helpers:
        assert source.count(read_file(helper).text) == 1


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_script_includes_every_helper_it_calls(name: str) -> None:
    declared_by = {
        declared: helper
        for helper in HELPER_FILES
        for declared in _DECLARED.findall(read_file(helper).text)
    }
    used_in = [read_file(f"{name}.js"), *included(f"{name}.js")]
    available = {declared for file in used_in[1:] for declared in _DECLARED.findall(file.text)}
    for file in used_in:
        body = re.sub(r"//.*|/\*.*?\*/", "", file.text, flags=re.DOTALL)
        for declared, helper in declared_by.items():
            # A use: the name alone, not a property (.name) nor an object key (name:).
            if re.search(rf"(?<![\w$.']){re.escape(declared)}\b(?!\s*:)", body):
                assert declared in available or declared in _DECLARED.findall(file.text), (
                    f"{file.path} calls {declared} of {helper}, which {name}.js does not include"
                )


def _folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.setattr(scripts, "script_folder", lambda: tmp_path)


def test_helpers_come_first_inside_the_function_they_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _folder(
        tmp_path,
        monkeypatch,
        {
            "run.js": "// world: isolated\n// Says hi.\n"
            "// include: lib/b.js\n// include: lib/a.js\n((x) => b(a(x)))\n",
            "lib/a.js": "// world: any\n// One.\nconst a = (x) => x + 1;\n",
            "lib/b.js": "// world: any\n// Two.\n// include: lib/a.js\n"
            "const b = (x) => a(x) * 2;\n",
        },
    )
    source = page_script("run")
    assert source.index("const a") < source.index("const b") < source.index("((x) =>")
    assert source.count("const a") == 1
    assert source.startswith("(() => {")
    assert source.rstrip().endswith("})()")


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        (
            {"run.js": "// world: main\n// Hi.\n// include: lib/none.js\n(() => 1)\n"},
            "no page script",
        ),
        (
            {
                "run.js": "// world: main\n// Hi.\n// include: lib/a.js\n(() => 1)\n",
                "lib/a.js": "// world: any\n// A.\n// include: lib/b.js\n",
                "lib/b.js": "// world: any\n// B.\n// include: lib/a.js\n",
            },
            "circle",
        ),
        (
            {
                "run.js": "// world: main\n// Hi.\n// include: other.js\n(() => 1)\n",
                "other.js": "// world: main\n// Other.\n(() => 2)\n",
            },
            "no helper",
        ),
        (
            {
                "run.js": "// world: main\n// Hi.\n// include: lib/a.js\n(() => 1)\n",
                "lib/a.js": "// world: isolated\n// A.\n",
            },
            "includes lib/a.js",
        ),
        ({"run.js": "// Hi.\n(() => 1)\n"}, "names no world"),
        ({"run.js": "// world: any\n// Hi.\n(() => 1)\n"}, "names no world"),
    ],
)
def test_a_broken_include_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], problem: str
) -> None:
    _folder(tmp_path, monkeypatch, files)
    with pytest.raises(ScriptError, match=problem):
        page_script("run")


def _host_modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(HOST.rglob("*.py")):
        if path == Path(scripts.__file__).resolve():
            continue  # the loader's own wrapper around a script and its helpers
        yield str(path.relative_to(HOST.parent.parent)), ast.parse(path.read_text(), str(path))


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _literal(node: ast.expr, constants: dict[str, ast.expr]) -> bool:
    """A string written in the module: a literal, an f-string, a sum of them, or a
    module-level name bound to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, constants) or _literal(node.right, constants)
    if isinstance(node, ast.Name) and node.id in constants:
        return _literal(constants[node.id], constants)
    return False


def test_no_host_module_holds_page_javascript_in_a_string() -> None:
    found = []
    for module, tree in _host_modules():
        docstrings = _docstrings(tree)
        constants = {
            target.id: statement.value
            for statement in tree.body
            if isinstance(statement, ast.Assign)
            for target in statement.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and _LOOKS_LIKE_JS.search(node.value)
            ):
                found.append(f"{module}:{node.lineno}: {node.value[:60]!r}")
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if isinstance(node.func, ast.Name):
                name = node.func.id
            if name not in _RUNS_SCRIPT:
                continue  # (evaluate_isolated takes a script's name: checked below)
            script = node.args[:1]
            script += [kw.value for kw in node.keywords if kw.arg in ("expression", "script")]
            if any(_literal(arg, constants) for arg in script):
                found.append(f"{module}:{node.lineno}: {name}() of a string written in Python")
    assert not found, "page JavaScript belongs in server/host/page/js/:\n" + "\n".join(found)


def test_the_isolated_world_runs_only_isolated_scripts() -> None:
    for module, tree in _host_modules():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id == "evaluate_isolated" and len(node.args) > 1:
                name = node.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    assert script_world(name.value) == "isolated", f"{module}:{node.lineno}"
            if node.func.id == "page_script" and node.args:
                name = node.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    assert f"{name.value}.js" in {f"{s}.js" for s in SCRIPTS}, module
