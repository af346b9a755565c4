"""The memory tools."""
