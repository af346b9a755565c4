"""Web machinery for agent tools: fetching public addresses, extraction, search engines."""
