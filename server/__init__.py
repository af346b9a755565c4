"""Crewhost: a self-hosted team server for AI agents that work in real browsers."""

__version__ = "0.1.0"
