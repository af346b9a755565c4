"""The browser tools, one module per tool, named after it."""
