"""The hub's domain logic. Services raise errors; they never build HTTP responses."""
