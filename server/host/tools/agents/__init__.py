"""Tools an agent organises its own work with: task lists and sub-agents."""
