"""The hub: accounts, sessions, teams, invitations, the host registry and its HTTP API."""
