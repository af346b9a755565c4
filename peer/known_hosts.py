"""Pinned host keys, per account: trust on first use, and a loud refusal when a key changes."""

from __future__ import annotations

import json
import os
from pathlib import Path


class HostKeyChanged(Exception):
    """The host answered with a key other than the one pinned for it."""

    code = "hostKeyChanged"

    def __init__(self, host_id: str, pinned: str, offered: str, path: Path) -> None:
        super().__init__(
            f"the identity key of host {host_id} changed (pinned {pinned[:12]}…, now "
            f"{offered[:12]}…): someone may be in the middle. If you know its key changed "
            "(say, the host was reinstalled), accept the new key: remove the line naming "
            f"{host_id} from the known-hosts file {path}, then connect again."
        )
        self.host_id = host_id
        self.path = path


class KnownHostsUnreadable(Exception):
    """The known-hosts file is not the JSON this module writes (say, after a hand edit)."""

    code = "knownHostsUnreadable"

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(
            f"the known-hosts file {path} is not valid JSON ({problem}): fix it, or delete "
            "it to pin every host's key afresh on the next connection"
        )
        self.path = path


class KnownHosts:
    """A JSON file ``{account_id: {host_id: public_key}}``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, dict[str, str]]:
        if not self.path.exists():
            return {}
        try:
            known = json.loads(self.path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise KnownHostsUnreadable(self.path.absolute(), str(exc)) from exc
        if not isinstance(known, dict):
            raise KnownHostsUnreadable(self.path.absolute(), "not a JSON object")
        return known

    def check(self, account_id: str, host_id: str, public_key: str) -> None:
        """Pin on first sight; raise ``HostKeyChanged`` if a pinned key differs."""
        known = self._load()
        pinned = known.get(account_id, {}).get(host_id)
        if pinned is None:
            known.setdefault(account_id, {})[host_id] = public_key
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            # Which hosts an account reaches is its owner's to read alone, like the config.
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            if hasattr(os, "fchmod"):  # a temporary file left behind may be wider
                os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(known, indent=2, sort_keys=True))
            os.replace(temporary, self.path)
        elif pinned != public_key:
            raise HostKeyChanged(host_id, pinned, public_key, self.path.absolute())
