"""An installed wheel carries its Alembic history and migrates a database by itself."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from server.db.engine import ALEMBIC_DIR

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(  # noqa: S603 - our own command line
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.packaging
def test_an_installed_wheel_migrates_a_new_database(tmp_path: Path) -> None:
    wheels, target, data = tmp_path / "wheels", tmp_path / "site", tmp_path / "data"
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check", "-q")
    _run(*pip, "wheel", "--no-deps", "-w", wheels, ROOT, cwd=tmp_path)
    (wheel,) = wheels.glob("crewhost-*.whl")
    history = sorted(path.name for path in (ALEMBIC_DIR / "versions").glob("*.py"))
    with zipfile.ZipFile(wheel) as archive:
        packed = {Path(name).name for name in archive.namelist() if "/migrations/" in name}
    assert set(history) | {"env.py", "script.py.mako"} <= packed

    _run(*pip, "install", "--no-deps", "--target", target, wheel, cwd=tmp_path)
    # Only the installed copy of crewhost is importable: no checkout on the path.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CREWHOST_")}
    env["PYTHONPATH"] = str(target)
    where = _run(
        sys.executable, "-c", "import server; print(server.__file__)", cwd=tmp_path, env=env
    )
    assert where.strip().startswith(str(target))
    _run(
        sys.executable,
        "-m",
        "server.cli",
        "admin",
        "migrate",
        "--data-dir",
        data,
        cwd=tmp_path,
        env=env,
    )

    with sqlite3.connect(data / "crewhost.db") as db:
        (version,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
    assert version == ScriptDirectory(str(ALEMBIC_DIR)).get_current_head()
