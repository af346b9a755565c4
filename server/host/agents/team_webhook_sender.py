"""Sending one signed event to a team webhook's address, under the public-only address policy.

The address's host is resolved once, every address it resolved to is judged
(``resolve_pinned``), and the connection goes to the judged address. Redirects are not
followed: a webhook that answers 3xx has not taken the event. What an attempt records is
an HTTP status or a fixed phrase, never the address (its path may be a chat service's
token) nor the receiver's answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import aiohttp
from standardwebhooks import Webhook
from yarl import URL

from server.common.browser_address_policy import IPAddress, normalize_host
from server.common.public_addresses import (
    NameNotResolved,
    NonPublicAddress,
    PublicOnlyPolicy,
    Resolver,
    resolve_pinned,
    system_resolve,
)
from server.host.web.fetcher import PinnedResolver

# Waits after a failed attempt, before the next: six attempts over about 23 hours.
RETRY_DELAYS: tuple[float, ...] = (60.0, 600.0, 3600.0, 6 * 3600.0, 16 * 3600.0)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
_USER_AGENT = "Crewhost-Webhooks/1"


def retry_delay(attempts: int) -> float | None:
    """How long to wait after ``attempts`` failed attempts, or None when none is left."""
    if attempts < 1 or attempts > len(RETRY_DELAYS):
        return None
    return RETRY_DELAYS[attempts - 1]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One attempt's result: ``status`` is the answer's HTTP status when there was one;
    ``error`` a fixed phrase when there was none; ``final`` when retrying cannot help."""

    status: int | None
    error: str | None
    final: bool = False

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def signed_headers(
    secrets: Sequence[str], message_id: str, sent_at: float, body: str
) -> dict[str, str]:
    """The Standard Webhooks headers for ``body`` sent at ``sent_at`` (seconds), signed
    with each of ``secrets`` (after a rotation, the new one and the one before it)."""
    moment = datetime.fromtimestamp(int(sent_at), UTC)
    signatures = [Webhook(secret).sign(message_id, moment, body) for secret in secrets]
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(sent_at)),
        "webhook-signature": " ".join(signatures),
    }


@dataclass
class WebhookSender:
    """POSTs events; ``policy`` says which addresses may be dialed, ``resolver`` how names
    resolve (tests inject both)."""

    policy: PublicOnlyPolicy = field(default_factory=PublicOnlyPolicy)
    resolver: Resolver = system_resolve
    timeout: float = 15.0

    async def judge(self, url: str) -> None:
        """Raise ``NonPublicAddress`` or ``NameNotResolved`` unless ``url`` may be dialed."""
        parsed = URL(url)
        await self._pinned(parsed)

    async def send(self, url: str, headers: dict[str, str], body: str) -> Outcome:
        """POST ``body`` (JSON) to ``url`` with ``headers``; never raises for the receiver's
        faults, which become the outcome."""
        parsed = URL(url)
        pinned = PinnedResolver()
        try:
            async with asyncio.timeout(self.timeout):
                pinned.pinned[normalize_host(parsed.raw_host or "")] = await self._pinned(parsed)
                connector = aiohttp.TCPConnector(resolver=pinned, use_dns_cache=False)
                async with (
                    aiohttp.ClientSession(connector=connector) as session,
                    session.post(
                        parsed,
                        data=body.encode("utf-8"),
                        headers={
                            **headers,
                            "Content-Type": "application/json",
                            "User-Agent": _USER_AGENT,
                        },
                        allow_redirects=False,
                    ) as response,
                ):
                    return Outcome(response.status, None)
        except NonPublicAddress:
            return Outcome(None, "address refused by the host's address policy", final=True)
        except NameNotResolved:
            return Outcome(None, "the host name did not resolve")
        except TimeoutError:
            return Outcome(None, f"no answer within {self.timeout:g} s")
        except aiohttp.ClientSSLError:
            return Outcome(None, "the TLS connection failed")
        except (aiohttp.ClientError, OSError):
            return Outcome(None, "the connection failed")

    async def _pinned(self, url: URL) -> IPAddress:
        host = normalize_host(url.raw_host or "")
        port = url.explicit_port or (443 if url.scheme == "https" else 80)
        return await resolve_pinned(host, port, self.policy, resolver=self.resolver)
