"""The host's services: one per area; a route calls one, and each owns its writes."""
