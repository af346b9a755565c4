"""Repositories of the hub, one per aggregate. Every team-owned query filters by team_id."""
