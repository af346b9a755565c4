"""The host: browsers, agents, memories, vault, proxies and the egress relay."""
