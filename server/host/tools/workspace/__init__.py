"""The workspace tools: an agent's own files and its team's shared ones."""
