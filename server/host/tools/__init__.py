"""The agent tool catalog: browser tools with the safety contract, called by the agent runtime."""
