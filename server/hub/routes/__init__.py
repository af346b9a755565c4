"""The hub's HTTP routes, one module per area. Each route: parse, authorise, call, serialise."""
