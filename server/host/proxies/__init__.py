"""Proxies of browser profiles: address forms, the loopback relay, status marks."""
