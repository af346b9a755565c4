"""The host's Team API routes, one module per capability: parse, authorize, call one service."""
