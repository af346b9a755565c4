"""The skills tools: an agent reads the skills it has on demand, and proposes new ones."""
