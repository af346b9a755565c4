"""``crewhost admin rotate-key``, ``retire-key`` and ``wrap-key-ring`` as real processes, and
a start that needs the key ring."""

from __future__ import annotations

import asyncio
import json
import re
import stat
from pathlib import Path

from server.common.clock import SystemClock
from server.config import load_settings
from server.db.engine import Database
from server.host.services.keys import SecretKeys, key_ring_file
from server.host.services.providers import ProviderService
from tests.test_cli import run


async def set_provider_key(data_dir: Path, key: str) -> str:
    """Seal a provider key as a host would; answers the key ring's active key id."""
    settings = load_settings(env={}, overrides={"data_dir": str(data_dir)})
    db = Database(settings.database_url)
    try:
        await db.migrate()
        async with SecretKeys(db, key_ring_file(settings)).open_box() as box:
            await ProviderService(db, SystemClock(), box, lambda *_: None).set_key(
                "t" * 32, "openai", key
            )
            return box.ring.active_id
    finally:
        await db.close()


async def test_rotate_and_retire_keys(tmp_path: Path) -> None:
    data = str(tmp_path)
    code, _, err = await run("admin", "rotate-key", "--data-dir", data)
    assert (code, "there is no key ring" in err) == (2, True)
    first = await set_provider_key(tmp_path, "sk-cli-secret")
    code, _, err = await run("admin", "retire-key", first, "--data-dir", data)
    assert (code, err) == (
        2,
        f"crewhost: key {first} is the active key: run `crewhost admin rotate-key` first\n",
    )
    code, out, err = await run("admin", "rotate-key", "--data-dir", data)
    assert code == 0, err
    second = re.fullmatch(r"new active key ([0-9a-f]{8}): re-encrypted 1 secrets\n", out)
    assert second is not None
    code, out, _ = await run("admin", "retire-key", first, "--data-dir", data)
    assert (code, out) == (0, f"retired key {first}\n")
    code, _, err = await run("admin", "retire-key", first, "--data-dir", data)
    assert (code, err) == (2, f"crewhost: the key ring has no key '{first}'\n")
    ring = tmp_path / "host" / "key-ring.json"
    assert stat.S_IMODE(ring.stat().st_mode) == 0o600
    assert "sk-cli-secret" not in out + err

    # Once wrapped (a command of its own), the ring needs the passphrase; without it, it stays shut.
    wrapped = {"CREWHOST_MASTER_PASSPHRASE": "a master passphrase"}
    code, _, err = await run(
        "admin",
        "wrap-key-ring",
        "--passphrase-stdin",
        "--data-dir",
        data,
        stdin=b"a master passphrase\n",
    )
    assert code == 0, err
    code, _, err = await run("admin", "rotate-key", "--data-dir", data, env=wrapped)
    assert code == 0, err
    assert second.group(1) not in ring.read_text()
    code, _, err = await run("admin", "rotate-key", "--data-dir", data)
    assert code == 2
    assert "wrapped by a passphrase: set CREWHOST_MASTER_PASSPHRASE" in err


async def test_a_passphrase_on_a_plain_ring_is_refused_until_wrap_key_ring_wraps_it(
    tmp_path: Path,
) -> None:
    await set_provider_key(tmp_path, "sk-cli-secret")
    ring = tmp_path / "host" / "key-ring.json"
    plain = ring.read_bytes()
    data = str(tmp_path)
    passphrase = {"CREWHOST_MASTER_PASSPHRASE": "a master passphrase"}
    # Neither the doctor nor a start wraps it: a mistyped passphrase would lock the secrets.
    code, out, _ = await run("admin", "doctor", "--data-dir", data, env=passphrase)
    assert (code, "FIX   key ring:" in out, "wrap-key-ring" in out) == (1, True, True)
    code, _, err = await asyncio.wait_for(
        run("serve", "--port", "0", "--data-dir", data, env=passphrase), 60
    )
    assert code == 2
    assert "is not wrapped: stop the server and run `crewhost admin wrap-key-ring`" in err
    assert "Traceback" not in err
    assert ring.read_bytes() == plain
    # A passphrase other than the one set is refused; so is an empty one.
    code, _, err = await run(
        "admin",
        "wrap-key-ring",
        "--passphrase-stdin",
        "--data-dir",
        data,
        stdin=b"a master passphrasf\n",
        env=passphrase,
    )
    assert (code, "differs from CREWHOST_MASTER_PASSPHRASE" in err) == (2, True)
    code, _, err = await run(
        "admin", "wrap-key-ring", "--passphrase-stdin", "--data-dir", data, stdin=b"\n"
    )
    assert (code, "needs a passphrase" in err) == (2, True)
    assert ring.read_bytes() == plain
    code, out, err = await run(
        "admin",
        "wrap-key-ring",
        "--passphrase-stdin",
        "--data-dir",
        data,
        stdin=b"a master passphrase\n",
        env=passphrase,
    )
    assert code == 0, err
    assert out.startswith(f"wrapped the key ring {ring}")
    assert "wrapped" in json.loads(ring.read_text())
    assert "a master passphrase" not in out + err
    code, out, _ = await run("admin", "doctor", "--data-dir", data, env=passphrase)
    assert "ok    key ring: 1 keys" in out
    code, _, err = await run(
        "admin", "wrap-key-ring", "--passphrase-stdin", "--data-dir", data, stdin=b"again\n"
    )
    assert (code, "is wrapped already" in err) == (2, True)


async def test_serve_refuses_to_start_without_the_key_ring_its_secrets_need(
    tmp_path: Path,
) -> None:
    await set_provider_key(tmp_path, "sk-cli-secret")
    (tmp_path / "host" / "key-ring.json").unlink()
    code, _, err = await asyncio.wait_for(
        run("serve", "--port", "0", "--data-dir", str(tmp_path)), 60
    )
    assert code == 2
    assert "the key ring" in err
    assert "is missing, but the database holds encrypted secrets (providers.api_key)" in err
    assert "Traceback" not in err
    assert not (tmp_path / "host" / "key-ring.json").exists()
