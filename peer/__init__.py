"""The member side in Python: sign in, get tickets, connect to hosts, call the Team API."""

from peer.connection import HostConnection, NotServed, connect_to_host
from peer.hub_client import HubClient, HubError
from peer.known_hosts import HostKeyChanged, KnownHosts, KnownHostsUnreadable

__all__ = [
    "HostConnection",
    "HostKeyChanged",
    "HubClient",
    "HubError",
    "KnownHosts",
    "KnownHostsUnreadable",
    "NotServed",
    "connect_to_host",
]
