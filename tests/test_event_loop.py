"""Choosing the event loop: uvloop when installed, the standard one when asked."""

from __future__ import annotations

import asyncio

import pytest

from server import event_loop
from server.cli import _settings, build_parser
from server.common.errors import InvalidArgument


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_auto_is_uvloop_when_it_is_installed() -> None:
    assert event_loop.uvloop_installed()
    assert event_loop.loop_name("auto") == "uvloop"
    assert event_loop.run(_loop_module(), "auto") == "uvloop"


def test_asyncio_runs_the_standard_loop() -> None:
    assert event_loop.run(_loop_module(), "asyncio") == "asyncio"


def test_uvloop_asked_for_but_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_loop, "uvloop_installed", lambda: False)
    assert event_loop.loop_name("auto") == "asyncio"
    with pytest.raises(InvalidArgument, match="--loop asyncio"):
        event_loop.run(_loop_module(), "uvloop")


@pytest.mark.parametrize("command", ["serve", "hub"])
def test_loop_option_sets_the_setting(command: str, tmp_path: object) -> None:
    args = build_parser().parse_args([command, "--loop", "asyncio", "--data-dir", str(tmp_path)])
    assert _settings(args).event_loop == "asyncio"
    default = build_parser().parse_args([command, "--data-dir", str(tmp_path)])
    assert _settings(default).event_loop == "auto"
