"""The team's MCP servers as the host's agents use them: one live session per server,
its status, its tools adapted for the model providers, and each agent's calls."""
