"""Pieces shared by the hub, the host and the peer library."""
