"""The web client's files at /app: only built files, the SPA fallback, and strict headers."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
from aiohttp import web

from server.hub.app import openapi_document
from server.hub.http.web_client import add_web_client

ROOT = Path(__file__).resolve().parents[3]


async def _serve(dist: Path) -> tuple[web.AppRunner, str]:
    app = web.Application()
    add_web_client(app, dist)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


async def test_built_files_are_served_and_unknown_paths_get_the_app(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>app</title>")
    (tmp_path / "assets" / "main-abc123.js").write_text("console.log(1)")
    (tmp_path.parent / "secret.txt").write_text("not for you")
    runner, base = await _serve(tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/app/assets/main-abc123.js") as reply:
                assert reply.status == 200
                assert reply.content_type == "text/javascript"
                assert "immutable" in reply.headers["Cache-Control"]
            async with session.get(f"{base}/app/teams/abc/members") as reply:
                assert reply.status == 200
                assert "<title>app</title>" in await reply.text()
                assert "frame-ancestors 'none'" in reply.headers["Content-Security-Policy"]
            async with session.get(f"{base}/app/..%2fsecret.txt") as reply:
                assert "not for you" not in await reply.text()
            async with session.get(f"{base}/app", allow_redirects=False) as reply:
                assert (reply.status, reply.headers["Location"]) == (302, "/app/")
    finally:
        await runner.cleanup()


async def test_a_build_after_start_is_served_and_a_missing_asset_is_not_found(
    tmp_path: Path,
) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>app</title>")
    runner, base = await _serve(tmp_path)
    try:
        (tmp_path / "assets" / "main-new456.js").write_text("console.log(2)")
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/app/assets/main-new456.js") as reply:
                assert (reply.status, await reply.text()) == (200, "console.log(2)")
            async with session.get(f"{base}/app/assets/main-gone.js") as reply:
                assert reply.status == 404
                assert "<title>app</title>" not in await reply.text()
    finally:
        await runner.cleanup()


async def test_an_unbuilt_client_says_how_to_build_it(tmp_path: Path) -> None:
    runner, base = await _serve(tmp_path / "missing")
    try:
        async with aiohttp.ClientSession() as session, session.get(f"{base}/app/") as reply:
            assert reply.status == 503
            assert "make web" in await reply.text()
    finally:
        await runner.cleanup()


def test_the_web_clients_api_schema_is_the_servers() -> None:
    committed = json.loads((ROOT / "web/src/api/openapi.json").read_text(encoding="utf-8"))
    assert committed == openapi_document(), "run: crewhost admin openapi > web/src/api/openapi.json"
