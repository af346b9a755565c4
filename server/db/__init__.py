"""The SQL schema and the engine shared by the hub and the host."""
