"""The agent runtime: agents' permissions, the consent gate, and the turn loop over providers."""
