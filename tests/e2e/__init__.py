"""End-to-end suite against the real clients (opt-in: `pytest -m e2e tests/e2e`)."""
