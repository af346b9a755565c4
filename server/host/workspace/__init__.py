"""Workspaces: confined folders of files for agents and their team, with quotas."""
