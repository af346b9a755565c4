"""The web tools: fetching an address and searching the web, outside the browser."""
