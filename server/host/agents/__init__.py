"""The agent runtime, the host's application-service tier: turns over providers, the consent
gate, memory review and teaching. It sits above the agent tools (``tools/``), which sit above
the domain services (``services/``) that people and agents share; the ``Host tiers``
import-linter contract in ``pyproject.toml`` keeps that order."""
