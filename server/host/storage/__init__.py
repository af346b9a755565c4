"""The host's repositories. Every query filters by team_id."""
