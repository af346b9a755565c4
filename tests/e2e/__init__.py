"""End-to-end tests: the web client in real Chromium against a real ``crewhost serve``."""
