"""The browser engine: Chromium under Playwright, partitions, tabs and their lifetime."""
