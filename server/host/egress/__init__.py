"""Members' computers as egress: their channels, and the exit the browser relay uses."""
