"""The host's Team API routes, one module per capability."""
