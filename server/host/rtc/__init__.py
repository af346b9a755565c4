"""WebRTC on the host: the peer manager and the team-api channel."""
